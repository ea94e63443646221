// nl2sql's page: streamed answers, Stop, copy, accept, and result tables paged and sorted.
// Everything else is plain HTML from the server; every request goes to this server only.
"use strict";

const PAGE_ROWS = 25;
const JSON_FIRST = "application/json, application/x-ndjson";

function streamForm(form) {
  const target = document.getElementById(form.dataset.target);
  const progress = document.getElementById(form.dataset.progress);
  const alert = form.querySelector(".error");
  const submit = form.querySelector("button[type=submit]");
  const stop = form.querySelector(".stop");
  let controller = null;
  stop.addEventListener("click", () => { if (controller) controller.abort(); });
  // Keyboard: Ctrl+Enter (or Cmd+Enter) sends; in the question, Enter alone does (Shift+Enter
  // starts a new line).
  form.addEventListener("keydown", (event) => {
    if (event.key !== "Enter" || event.target.tagName !== "TEXTAREA") return;
    const plain = event.target.name === "question" && !event.shiftKey;
    if (event.ctrlKey || event.metaKey || plain) {
      event.preventDefault();
      if (!submit.disabled) form.requestSubmit();
    }
  });
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    controller = new AbortController();
    const asked = form.elements.question ? form.elements.question.value.trim() : "";
    submit.disabled = true;
    stop.hidden = false;
    alert.hidden = true;
    progress.textContent = "Sending…";
    try {
      const response = await fetch(form.action, {
        method: "POST", body: new URLSearchParams(new FormData(form)),
        headers: {Accept: JSON_FIRST}, signal: controller.signal});
      if (!response.ok) {
        const data = await response.json().catch(() => ({error: response.statusText}));
        throw new Error(data.error);
      }
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = "";
      for (;;) {
        const {value, done} = await reader.read();
        if (done) break;
        buffer += value;
        let end;
        while ((end = buffer.indexOf("\n")) >= 0) {
          handle(JSON.parse(buffer.slice(0, end)), asked);
          buffer = buffer.slice(end + 1);
        }
      }
    } catch (error) {
      if (error.name === "AbortError") {
        progress.textContent = "Stopped: the running query was cancelled.";
      } else {
        progress.textContent = "";
        showError(error.message);
      }
    } finally {
      controller = null;
      submit.disabled = false;
      stop.hidden = true;
    }
  });

  function showError(message) {
    alert.textContent = message;
    alert.hidden = false;
  }

  function handle(event, asked) {
    if (event.event === "started") {
      if (!form.elements.conversation_id.value) addToHistory(event.conversation_id, asked);
      form.elements.conversation_id.value = event.conversation_id;
      history.replaceState(null, "", "/c/" + event.conversation_id);
    } else if (event.event === "status") {
      progress.textContent = event.text;
    } else if (event.event === "answer" || event.event === "result") {
      if (form.dataset.stream === "append") {
        target.insertAdjacentHTML("beforeend", event.html);
        form.elements.question.value = "";
      } else {
        target.innerHTML = event.html;
      }
      enhance(target.lastElementChild);
      progress.textContent = "Done.";
    } else if (event.event === "error") {
      progress.textContent = "";
      showError(event.error);
    }
  }
}

// A new conversation goes on top of the history beside it (as it will after a reload).
function addToHistory(conversationId, question) {
  const list = document.querySelector("aside.history ul");
  if (!list) return;
  list.querySelectorAll("li:not(:has(a))").forEach((empty) => empty.remove());
  const item = document.createElement("li");
  const link = document.createElement("a");
  link.href = "/c/" + conversationId;
  link.textContent = question;
  item.append(link);
  list.prepend(item);
}

async function act(button) {
  const box = button.closest(".actions");
  button.disabled = true;
  const response = await fetch(button.dataset.action, {method: "POST", headers: {Accept: "application/json"}});
  const data = await response.json().catch(() => ({error: response.statusText}));
  if (response.ok) {
    box.innerHTML = data.html;
    enhance(box);
  } else {
    button.disabled = false;
    const note = document.createElement("p");
    note.className = "error";
    note.setAttribute("role", "alert");
    note.textContent = data.error;
    box.append(note);
  }
}

async function copy(button) {
  const code = button.parentElement.querySelector("code").textContent;
  try {
    await navigator.clipboard.writeText(code);
    button.textContent = "Copied";
  } catch (error) {
    window.getSelection().selectAllChildren(button.parentElement.querySelector("code"));
    button.textContent = "Selected: press Ctrl+C";
  }
  setTimeout(() => { button.textContent = "Copy SQL"; }, 2000);
}

function pagedTable(box) {
  const body = box.querySelector("tbody");
  const rows = Array.from(body.rows);
  const pager = box.querySelector(".pager");
  const label = box.querySelector(".page-of");
  const pages = Math.max(1, Math.ceil(rows.length / PAGE_ROWS));
  let page = 0;
  function show() {
    rows.forEach((row, i) => { row.hidden = Math.floor(i / PAGE_ROWS) !== page; });
    label.textContent = `Page ${page + 1} of ${pages}`;
    pager.querySelector("[data-page='-1']").disabled = page === 0;
    pager.querySelector("[data-page='1']").disabled = page === pages - 1;
  }
  pager.hidden = pages < 2;
  pager.addEventListener("click", (event) => {
    const step = event.target.closest("[data-page]");
    if (step) { page = Math.min(pages - 1, Math.max(0, page + Number(step.dataset.page))); show(); }
  });
  box.querySelectorAll("th").forEach((th) => th.querySelector("button").addEventListener("click", () => {
    const column = Number(th.querySelector("button").dataset.sort);
    const up = th.getAttribute("aria-sort") !== "ascending";
    box.querySelectorAll("th").forEach((other) => other.setAttribute("aria-sort", "none"));
    th.setAttribute("aria-sort", up ? "ascending" : "descending");
    rows.sort((a, b) => compare(a.cells[column].textContent, b.cells[column].textContent) * (up ? 1 : -1));
    body.append(...rows);
    page = 0;
    show();
  }));
  show();
}

function compare(a, b) {
  const x = Number(a), y = Number(b);
  if (a !== "" && b !== "" && !Number.isNaN(x) && !Number.isNaN(y)) return x - y;
  return a.localeCompare(b, undefined, {numeric: true});
}

// Controls that need this script come disabled (data-script): before it runs, a click would do
// nothing and Ask would post the form and show raw JSON lines. Enabled here, after the
// listeners are in place.
function enhance(root) {
  if (!root) return;
  root.querySelectorAll("[data-script]").forEach((control) => {
    control.removeAttribute("data-script");
    control.disabled = false;
  });
  root.querySelectorAll("[data-table]").forEach(pagedTable);
}

document.addEventListener("click", (event) => {
  const action = event.target.closest("button[data-action]");
  if (action) act(action);
  const copying = event.target.closest("button[data-copy]");
  if (copying) copy(copying);
});
document.querySelectorAll("form[data-stream]").forEach(streamForm);
enhance(document);

"""Build the context engine's harder sets: four analytics schemas (SQLite scripts).

Writes ``tests/data/context_sets/{cricket,retail,hr,finance}.sql``: each a schema of 12-24
tables with foreign keys and seeded rows (deterministic), so that every gold query of
``tests/data/context_sets/analytics.jsonl`` runs and returns rows. Re-run after changing a
schema; the scripts are committed.

    python scripts/build_context_sets.py
"""

from __future__ import annotations

import json
import random
from datetime import date, timedelta
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "tests" / "data" / "context_sets"


def quote(value: object) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, (int, float)):
        return repr(value)
    return "'" + str(value).replace("'", "''") + "'"


def inserts(table: str, rows: list[tuple]) -> str:
    lines = [f"INSERT INTO {table} VALUES"]
    lines.append(",\n".join("  (" + ", ".join(quote(v) for v in row) + ")" for row in rows)
                 + ";")
    return "\n".join(lines)


# -- cricket: a T20 league's ball-by-ball statistics --------------------------------------------

CRICKET_DDL = """
CREATE TABLE country (country_id INTEGER PRIMARY KEY, country_name TEXT NOT NULL);
CREATE TABLE city (city_id INTEGER PRIMARY KEY, city_name TEXT NOT NULL,
    country_id INTEGER REFERENCES country (country_id));
CREATE TABLE venue (venue_id INTEGER PRIMARY KEY, venue_name TEXT NOT NULL,
    city_id INTEGER REFERENCES city (city_id));
CREATE TABLE team (team_id INTEGER PRIMARY KEY, team_name TEXT NOT NULL);
CREATE TABLE batting_style (batting_id INTEGER PRIMARY KEY, batting_hand TEXT NOT NULL);
CREATE TABLE bowling_style (bowling_id INTEGER PRIMARY KEY, bowling_skill TEXT NOT NULL);
CREATE TABLE player (player_id INTEGER PRIMARY KEY, player_name TEXT NOT NULL, dob DATE,
    batting_hand INTEGER REFERENCES batting_style (batting_id),
    bowling_skill INTEGER REFERENCES bowling_style (bowling_id),
    country_name INTEGER REFERENCES country (country_id));
CREATE TABLE season (season_id INTEGER PRIMARY KEY, season_year INTEGER NOT NULL,
    man_of_the_series INTEGER REFERENCES player (player_id),
    orange_cap INTEGER REFERENCES player (player_id),
    purple_cap INTEGER REFERENCES player (player_id));
CREATE TABLE rolee (role_id INTEGER PRIMARY KEY, role_desc TEXT NOT NULL);
CREATE TABLE toss_decision (toss_id INTEGER PRIMARY KEY, toss_name TEXT NOT NULL);
CREATE TABLE win_by (win_id INTEGER PRIMARY KEY, win_type TEXT NOT NULL);
CREATE TABLE outcome (outcome_id INTEGER PRIMARY KEY, outcome_type TEXT NOT NULL);
CREATE TABLE umpire (umpire_id INTEGER PRIMARY KEY, umpire_name TEXT NOT NULL,
    umpire_country INTEGER REFERENCES country (country_id));
CREATE TABLE "match" (match_id INTEGER PRIMARY KEY,
    team_1 INTEGER REFERENCES team (team_id), team_2 INTEGER REFERENCES team (team_id),
    match_date DATE, season_id INTEGER REFERENCES season (season_id),
    venue_id INTEGER REFERENCES venue (venue_id),
    toss_winner INTEGER REFERENCES team (team_id),
    toss_decide INTEGER REFERENCES toss_decision (toss_id),
    win_type INTEGER REFERENCES win_by (win_id), win_margin INTEGER,
    outcome_type INTEGER REFERENCES outcome (outcome_id),
    match_winner INTEGER REFERENCES team (team_id),
    man_of_the_match INTEGER REFERENCES player (player_id));
CREATE TABLE player_match (match_id INTEGER REFERENCES "match" (match_id),
    player_id INTEGER REFERENCES player (player_id), role_id INTEGER REFERENCES rolee (role_id),
    team_id INTEGER REFERENCES team (team_id), PRIMARY KEY (match_id, player_id));
CREATE TABLE ball_by_ball (match_id INTEGER REFERENCES "match" (match_id), over_id INTEGER,
    ball_id INTEGER, innings_no INTEGER, team_batting INTEGER REFERENCES team (team_id),
    team_bowling INTEGER REFERENCES team (team_id), striker_batting_position INTEGER,
    striker INTEGER REFERENCES player (player_id),
    non_striker INTEGER REFERENCES player (player_id),
    bowler INTEGER REFERENCES player (player_id),
    PRIMARY KEY (match_id, over_id, ball_id, innings_no));
CREATE TABLE batsman_scored (match_id INTEGER, over_id INTEGER, ball_id INTEGER,
    runs_scored INTEGER, innings_no INTEGER,
    PRIMARY KEY (match_id, over_id, ball_id, innings_no),
    FOREIGN KEY (match_id, over_id, ball_id, innings_no)
        REFERENCES ball_by_ball (match_id, over_id, ball_id, innings_no));
CREATE TABLE extra_type (extra_id INTEGER PRIMARY KEY, extra_name TEXT NOT NULL);
CREATE TABLE extra_runs (match_id INTEGER, over_id INTEGER, ball_id INTEGER,
    extra_type_id INTEGER REFERENCES extra_type (extra_id), extra_runs INTEGER,
    innings_no INTEGER, PRIMARY KEY (match_id, over_id, ball_id, innings_no),
    FOREIGN KEY (match_id, over_id, ball_id, innings_no)
        REFERENCES ball_by_ball (match_id, over_id, ball_id, innings_no));
CREATE TABLE out_type (out_id INTEGER PRIMARY KEY, out_name TEXT NOT NULL);
CREATE TABLE wicket_taken (match_id INTEGER, over_id INTEGER, ball_id INTEGER,
    player_out INTEGER REFERENCES player (player_id),
    kind_out INTEGER REFERENCES out_type (out_id),
    fielders INTEGER REFERENCES player (player_id), innings_no INTEGER,
    PRIMARY KEY (match_id, over_id, ball_id, innings_no),
    FOREIGN KEY (match_id, over_id, ball_id, innings_no)
        REFERENCES ball_by_ball (match_id, over_id, ball_id, innings_no));
"""

FIRST = ["Arjun", "Rohit", "Virat", "Shane", "David", "Kane", "Jos", "Rashid", "Imran",
         "Quinton", "Faf", "Ben", "Glenn", "Mitchell", "Trent", "Kagiso", "Andre", "Chris",
         "Sunil", "Hardik", "Ravindra", "Jasprit", "Yuzvendra", "Steve", "Aaron", "Lasith",
         "Kieron", "Dwayne", "Shikhar", "Ajinkya", "Moeen", "Sam", "Pat", "Marcus", "Tim",
         "Devon", "Wanindu", "Shakib", "Mustafizur", "Babar"]
LAST = ["Sharma", "Kohli", "Warner", "Williamson", "Buttler", "Khan", "de Kock", "du Plessis",
        "Stokes", "Maxwell", "Starc", "Boult", "Rabada", "Russell", "Gayle", "Narine",
        "Pandya", "Jadeja", "Bumrah", "Chahal", "Smith", "Finch", "Malinga", "Pollard", "Bravo",
        "Dhawan", "Rahane", "Ali", "Curran", "Cummins", "Stoinis", "Southee", "Conway",
        "Hasaranga", "Al Hasan", "Rahman", "Azam", "Patel", "Iyer", "Gill"]


def cricket(rng: random.Random) -> str:
    countries = ["India", "Australia", "England", "South Africa", "New Zealand", "West Indies",
                 "Sri Lanka", "Bangladesh", "Afghanistan", "Pakistan"]
    cities = [(1, "Mumbai", 1), (2, "Bangalore", 1), (3, "Chennai", 1), (4, "Kolkata", 1),
              (5, "Delhi", 1), (6, "Dubai", 9), (7, "Durban", 4), (8, "Cape Town", 4),
              (9, "Abu Dhabi", 9), (10, "Hyderabad", 1)]
    venues = [(1, "Wankhede Stadium", 1), (2, "M Chinnaswamy Stadium", 2),
              (3, "MA Chidambaram Stadium", 3), (4, "Eden Gardens", 4),
              (5, "Feroz Shah Kotla", 5), (6, "Dubai International Stadium", 6),
              (7, "Kingsmead", 7), (8, "Newlands", 8), (9, "Sheikh Zayed Stadium", 9),
              (10, "Rajiv Gandhi International Stadium", 10)]
    teams = ["Mumbai Indians", "Royal Challengers Bangalore", "Chennai Super Kings",
             "Kolkata Knight Riders", "Delhi Capitals", "Sunrisers Hyderabad",
             "Rajasthan Royals", "Punjab Kings"]
    batting = ["Left-hand bat", "Right-hand bat"]
    bowling = ["Right-arm fast", "Right-arm medium", "Left-arm fast", "Legbreak googly",
               "Right-arm offbreak", "Slow left-arm orthodox"]
    players = []
    for i in range(40):
        born = date(1982, 1, 1) + timedelta(days=rng.randrange(0, 6000))
        players.append((i + 1, f"{FIRST[i]} {LAST[i]}", born.isoformat(), rng.randint(1, 2),
                        rng.randint(1, 6), rng.choice([1, 1, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10])))
    seasons = [(s + 1, 2008 + s, rng.randint(1, 40), rng.randint(1, 40), rng.randint(1, 40))
               for s in range(4)]
    roles = ["Captain", "Keeper", "Player", "CaptainKeeper"]
    tosses = ["field", "bat"]
    wins = ["runs", "wickets", "NO Result", "Tie"]
    outcomes = ["Result", "No Result", "Superover"]
    umpires = [(1, "Aleem Dar", 10), (2, "Simon Taufel", 2), (3, "Kumar Dharmasena", 7),
               (4, "Richard Illingworth", 3), (5, "Nitin Menon", 1), (6, "Marais Erasmus", 4)]
    extras = ["wides", "legbyes", "byes", "noballs", "penalty"]
    outs = ["caught", "bowled", "run out", "lbw", "stumped", "caught and bowled", "hit wicket"]
    squads = {t: list(range(t * 5 - 4, t * 5 + 1)) for t in range(1, 9)}
    matches, player_match, balls, scored, extra_rows, wickets = [], [], [], [], [], []
    for m in range(1, 41):
        season = 1 + (m - 1) // 10
        a, b = rng.sample(range(1, 9), 2)
        day = date(2007 + season, 4, 1) + timedelta(days=(m - 1) % 10 * 4)
        toss = rng.choice([a, b])
        winner = rng.choice([a, b])
        win_type = rng.choice([1, 2, 2, 1, 4])
        matches.append((m, a, b, day.isoformat(), season, rng.randint(1, 10), toss,
                        rng.randint(1, 2), win_type, rng.randint(1, 60),
                        3 if win_type == 4 else 1, winner, rng.choice(squads[winner])))
        for team in (a, b):
            for k, pid in enumerate(squads[team]):
                player_match.append((m, pid, 1 if k == 0 else (2 if k == 1 else 3), team))
        for innings, (bat, bowl) in enumerate(((a, b), (b, a)), start=1):
            batters = squads[bat]
            for over in range(1, 5):
                bowler = rng.choice(squads[bowl])
                for ball in range(1, 7):
                    striker = batters[(over + ball) % 5]
                    non_striker = batters[(over + ball + 1) % 5]
                    balls.append((m, over, ball, innings, bat, bowl, (over + ball) % 5 + 1,
                                  striker, non_striker, bowler))
                    runs = rng.choice([0, 0, 1, 1, 1, 2, 4, 6])
                    scored.append((m, over, ball, runs, innings))
                    if rng.random() < 0.08:
                        extra_rows.append((m, over, ball, rng.randint(1, 5), rng.randint(1, 5),
                                           innings))
                    if rng.random() < 0.06:
                        wickets.append((m, over, ball, striker, rng.randint(1, 7),
                                        rng.choice(squads[bowl]), innings))
    parts = [CRICKET_DDL,
             inserts("country", [(i + 1, c) for i, c in enumerate(countries)]),
             inserts("city", cities), inserts("venue", venues),
             inserts("team", [(i + 1, t) for i, t in enumerate(teams)]),
             inserts("batting_style", [(i + 1, v) for i, v in enumerate(batting)]),
             inserts("bowling_style", [(i + 1, v) for i, v in enumerate(bowling)]),
             inserts("player", players), inserts("season", seasons),
             inserts("rolee", [(i + 1, v) for i, v in enumerate(roles)]),
             inserts("toss_decision", [(i + 1, v) for i, v in enumerate(tosses)]),
             inserts("win_by", [(i + 1, v) for i, v in enumerate(wins)]),
             inserts("outcome", [(i + 1, v) for i, v in enumerate(outcomes)]),
             inserts("umpire", umpires), inserts('"match"', matches),
             inserts("player_match", player_match), inserts("ball_by_ball", balls),
             inserts("batsman_scored", scored),
             inserts("extra_type", [(i + 1, v) for i, v in enumerate(extras)]),
             inserts("extra_runs", extra_rows),
             inserts("out_type", [(i + 1, v) for i, v in enumerate(outs)]),
             inserts("wicket_taken", wickets)]
    return "\n\n".join(parts) + "\n"


# -- retail: a chain of stores with online orders, loyalty and stock ----------------------------

RETAIL_DDL = """
CREATE TABLE regions (region_id INTEGER PRIMARY KEY, region_name TEXT NOT NULL);
CREATE TABLE countries (country_code TEXT PRIMARY KEY, country_name TEXT NOT NULL,
    region_id INTEGER REFERENCES regions (region_id));
CREATE TABLE stores (store_id INTEGER PRIMARY KEY, store_name TEXT NOT NULL, city TEXT,
    country_code TEXT REFERENCES countries (country_code), opened_on DATE,
    sq_ft INTEGER);
CREATE TABLE brands (brand_id INTEGER PRIMARY KEY, brand_name TEXT NOT NULL);
CREATE TABLE prod_categories (cat_id INTEGER PRIMARY KEY, cat_name TEXT NOT NULL,
    parent_cat_id INTEGER REFERENCES prod_categories (cat_id));
CREATE TABLE skus (sku_id INTEGER PRIMARY KEY, sku_desc TEXT NOT NULL,
    brand_id INTEGER REFERENCES brands (brand_id),
    cat_id INTEGER REFERENCES prod_categories (cat_id), list_prc NUMERIC(10, 2),
    unit_cost NUMERIC(10, 2), discontinued INTEGER NOT NULL DEFAULT 0);
CREATE TABLE vendors (vendor_id INTEGER PRIMARY KEY, vendor_name TEXT NOT NULL,
    country_code TEXT REFERENCES countries (country_code));
CREATE TABLE sku_vendors (sku_id INTEGER REFERENCES skus (sku_id),
    vendor_id INTEGER REFERENCES vendors (vendor_id), lead_days INTEGER,
    PRIMARY KEY (sku_id, vendor_id));
CREATE TABLE shoppers (shopper_id INTEGER PRIMARY KEY, first_nm TEXT, last_nm TEXT,
    email TEXT, signup_dt DATE, home_store_id INTEGER REFERENCES stores (store_id));
CREATE TABLE loyalty_tiers (tier_id INTEGER PRIMARY KEY, tier_name TEXT NOT NULL,
    min_points INTEGER);
CREATE TABLE loyalty_accounts (account_id INTEGER PRIMARY KEY,
    shopper_id INTEGER REFERENCES shoppers (shopper_id),
    tier_id INTEGER REFERENCES loyalty_tiers (tier_id), points_balance INTEGER);
CREATE TABLE channels (channel_id INTEGER PRIMARY KEY, channel_name TEXT NOT NULL);
CREATE TABLE baskets (basket_id INTEGER PRIMARY KEY,
    shopper_id INTEGER REFERENCES shoppers (shopper_id),
    store_id INTEGER REFERENCES stores (store_id),
    channel_id INTEGER REFERENCES channels (channel_id), basket_ts TIMESTAMP);
CREATE TABLE basket_lines (basket_id INTEGER REFERENCES baskets (basket_id), line_no INTEGER,
    sku_id INTEGER REFERENCES skus (sku_id), qty INTEGER, net_amt NUMERIC(10, 2),
    PRIMARY KEY (basket_id, line_no));
CREATE TABLE promos (promo_id INTEGER PRIMARY KEY, promo_code TEXT NOT NULL, pct_off INTEGER,
    starts_on DATE, ends_on DATE);
CREATE TABLE basket_promos (basket_id INTEGER REFERENCES baskets (basket_id),
    promo_id INTEGER REFERENCES promos (promo_id), PRIMARY KEY (basket_id, promo_id));
CREATE TABLE returns_log (return_id INTEGER PRIMARY KEY, basket_id INTEGER, line_no INTEGER,
    returned_on DATE, reason_cd TEXT,
    FOREIGN KEY (basket_id, line_no) REFERENCES basket_lines (basket_id, line_no));
CREATE TABLE stock_levels (store_id INTEGER REFERENCES stores (store_id),
    sku_id INTEGER REFERENCES skus (sku_id), on_hand INTEGER, snapshot_dt DATE,
    PRIMARY KEY (store_id, sku_id, snapshot_dt));
CREATE TABLE staff (staff_id INTEGER PRIMARY KEY, full_name TEXT NOT NULL,
    store_id INTEGER REFERENCES stores (store_id), role TEXT, hired_on DATE);
CREATE TABLE calendar (dt DATE PRIMARY KEY, yr INTEGER, qtr INTEGER, mo INTEGER,
    day_of_week TEXT, is_holiday INTEGER);
"""


def retail(rng: random.Random) -> str:
    regions = ["EMEA", "Americas", "APAC"]
    countries = [("DE", "Germany", 1), ("FR", "France", 1), ("GB", "United Kingdom", 1),
                 ("US", "United States", 2), ("CA", "Canada", 2), ("BR", "Brazil", 2),
                 ("JP", "Japan", 3), ("AU", "Australia", 3), ("CN", "China", 3)]
    stores = []
    cities = {"DE": ["Berlin", "Munich"], "FR": ["Paris", "Lyon"], "GB": ["London"],
              "US": ["Seattle", "Austin", "Boston"], "CA": ["Toronto"], "BR": ["Sao Paulo"],
              "JP": ["Osaka", "Tokyo"], "AU": ["Sydney"], "CN": ["Shanghai"]}
    sid = 0
    for code, names in cities.items():
        for city in names:
            sid += 1
            stores.append((sid, f"{city} Flagship" if sid % 3 == 0 else f"{city} Central",
                           city, code, (date(2010, 1, 1) + timedelta(days=200 * sid)).isoformat(),
                           rng.randint(8, 40) * 1000))
    brands = ["Northpeak", "Lumina", "Havenware", "Coastline", "Brightfield", "Ironleaf"]
    cats = [(1, "Apparel", None), (2, "Footwear", 1), (3, "Outerwear", 1), (4, "Home", None),
            (5, "Kitchen", 4), (6, "Bedding", 4), (7, "Electronics", None), (8, "Audio", 7),
            (9, "Toys", None)]
    nouns = {2: ["Trail Runner", "Canvas Sneaker", "Hiking Boot"],
             3: ["Rain Jacket", "Down Parka", "Fleece Vest"],
             5: ["Chef Knife", "Cast Iron Skillet", "Espresso Maker"],
             6: ["Linen Duvet", "Wool Blanket"],
             8: ["Wireless Earbuds", "Bookshelf Speaker", "Studio Headphones"],
             9: ["Wooden Train Set", "Puzzle Cube"]}
    skus = []
    for cat, items in nouns.items():
        for item in items:
            for b in rng.sample(range(1, 7), 2):
                price = round(rng.uniform(15, 300), 2)
                skus.append((len(skus) + 1, f"{brands[b - 1]} {item}", b, cat, price,
                             round(price * rng.uniform(0.35, 0.7), 2), int(rng.random() < 0.1)))
    vendors = [(1, "Pacific Textiles", "CN"), (2, "Rhein Metallwerk", "DE"),
               (3, "Maple Goods Co", "CA"), (4, "Osaka Electric Supply", "JP"),
               (5, "Lone Star Fulfilment", "US")]
    sku_vendors = [(s[0], v, rng.randint(5, 60)) for s in skus
                   for v in rng.sample(range(1, 6), 2)]
    firsts = ["Anna", "Ben", "Chloe", "Diego", "Emma", "Farid", "Greta", "Hiro", "Ines",
              "Jonas", "Kira", "Liam", "Mia", "Noah", "Olga", "Pedro", "Quinn", "Rosa",
              "Sven", "Tara", "Uma", "Victor", "Wendy", "Yusuf", "Zoe"]
    lasts = ["Meyer", "Dubois", "Smith", "Garcia", "Tanaka", "Brown", "Rossi", "Kim",
             "Novak", "Silva"]
    shoppers = []
    for i in range(60):
        f, last = firsts[i % 25], lasts[(i * 7) % 10]
        shoppers.append((i + 1, f, last, f"{f.lower()}.{last.lower()}{i}@example.com",
                         (date(2019, 1, 1) + timedelta(days=rng.randrange(0, 1500))).isoformat(),
                         rng.randint(1, len(stores))))
    tiers = [(1, "Bronze", 0), (2, "Silver", 1000), (3, "Gold", 5000), (4, "Platinum", 20000)]
    accounts = [(i + 1, s[0], rng.randint(1, 4), rng.randint(0, 30000))
                for i, s in enumerate(shoppers) if i % 4 != 3]
    channels = ["in-store", "web", "mobile app", "marketplace"]
    baskets, lines, basket_promos, returns = [], [], [], []
    promos = [(1, "SPRING10", 10, "2023-03-01", "2023-04-30"),
              (2, "BLACKFRIDAY", 30, "2023-11-24", "2023-11-27"),
              (3, "WELCOME5", 5, "2022-01-01", "2024-12-31"),
              (4, "SUMMER15", 15, "2023-06-01", "2023-08-31")]
    for b in range(1, 301):
        ts = date(2023, 1, 1) + timedelta(days=rng.randrange(0, 365))
        baskets.append((b, rng.randint(1, 60), rng.randint(1, len(stores)), rng.randint(1, 4),
                        f"{ts.isoformat()} {rng.randint(8, 21):02d}:{rng.randint(0, 59):02d}:00"))
        for line in range(1, rng.randint(2, 5)):
            sku = rng.choice(skus)
            qty = rng.randint(1, 3)
            lines.append((b, line, sku[0], qty, round(sku[4] * qty * rng.uniform(0.8, 1.0), 2)))
            if rng.random() < 0.07:
                returns.append((len(returns) + 1, b, line,
                                (ts + timedelta(days=rng.randint(1, 30))).isoformat(),
                                rng.choice(["DAMAGED", "WRONG_SIZE", "CHANGED_MIND", "LATE"])))
        if rng.random() < 0.25:
            basket_promos.append((b, rng.randint(1, 4)))
    stock = [(s[0], k[0], rng.randint(0, 80), "2023-12-31") for s in stores for k in skus
             if rng.random() < 0.5]
    roles = ["store manager", "cashier", "stock associate", "visual merchandiser"]
    staff = []
    for s in stores:
        for k in range(3):
            staff.append((len(staff) + 1,
                          f"{firsts[(s[0] * 3 + k) % 25]} {lasts[(s[0] + k) % 10]}", s[0],
                          roles[0] if k == 0 else rng.choice(roles[1:]),
                          (date(2012, 1, 1) + timedelta(days=rng.randrange(0, 4000))).isoformat()))
    days = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
    cal = []
    d = date(2023, 1, 1)
    while d.year == 2023:
        cal.append((d.isoformat(), d.year, (d.month - 1) // 3 + 1, d.month,
                    days[d.weekday()], int((d.month, d.day) in {(1, 1), (12, 25), (7, 4)})))
        d += timedelta(days=1)
    parts = [RETAIL_DDL, inserts("regions", [(i + 1, r) for i, r in enumerate(regions)]),
             inserts("countries", countries), inserts("stores", stores),
             inserts("brands", [(i + 1, v) for i, v in enumerate(brands)]),
             inserts("prod_categories", cats), inserts("skus", skus),
             inserts("vendors", vendors), inserts("sku_vendors", sku_vendors),
             inserts("shoppers", shoppers), inserts("loyalty_tiers", tiers),
             inserts("loyalty_accounts", accounts),
             inserts("channels", [(i + 1, v) for i, v in enumerate(channels)]),
             inserts("baskets", baskets), inserts("basket_lines", lines),
             inserts("promos", promos), inserts("basket_promos", basket_promos),
             inserts("returns_log", returns), inserts("stock_levels", stock),
             inserts("staff", staff), inserts("calendar", cal)]
    return "\n\n".join(parts) + "\n"


# -- hr: people, positions, pay, leave, reviews, training ---------------------------------------

HR_DDL = """
CREATE TABLE locations (location_id INTEGER PRIMARY KEY, city TEXT NOT NULL,
    state_province TEXT, country TEXT NOT NULL);
CREATE TABLE depts (dept_id INTEGER PRIMARY KEY, dept_name TEXT NOT NULL,
    location_id INTEGER REFERENCES locations (location_id), cost_center TEXT);
CREATE TABLE job_grades (grade_id INTEGER PRIMARY KEY, grade_code TEXT NOT NULL,
    min_sal NUMERIC(10, 2), max_sal NUMERIC(10, 2));
CREATE TABLE jobs (job_id INTEGER PRIMARY KEY, job_title TEXT NOT NULL,
    grade_id INTEGER REFERENCES job_grades (grade_id), is_people_manager INTEGER);
CREATE TABLE emp (emp_id INTEGER PRIMARY KEY, first_name TEXT, last_name TEXT,
    gender TEXT, birth_dt DATE, hire_dt DATE, term_dt DATE,
    dept_id INTEGER REFERENCES depts (dept_id), job_id INTEGER REFERENCES jobs (job_id),
    mgr_id INTEGER REFERENCES emp (emp_id), emp_type TEXT);
CREATE TABLE sal_history (emp_id INTEGER REFERENCES emp (emp_id), effective_dt DATE,
    annual_sal NUMERIC(10, 2), currency TEXT, PRIMARY KEY (emp_id, effective_dt));
CREATE TABLE bonus_payouts (payout_id INTEGER PRIMARY KEY,
    emp_id INTEGER REFERENCES emp (emp_id), fiscal_yr INTEGER, amount NUMERIC(10, 2));
CREATE TABLE leave_types (leave_type_id INTEGER PRIMARY KEY, leave_name TEXT NOT NULL,
    paid INTEGER);
CREATE TABLE leave_requests (request_id INTEGER PRIMARY KEY,
    emp_id INTEGER REFERENCES emp (emp_id),
    leave_type_id INTEGER REFERENCES leave_types (leave_type_id), start_dt DATE, end_dt DATE,
    days INTEGER, status TEXT);
CREATE TABLE review_cycles (cycle_id INTEGER PRIMARY KEY, cycle_name TEXT NOT NULL,
    period_start DATE, period_end DATE);
CREATE TABLE perf_reviews (review_id INTEGER PRIMARY KEY,
    emp_id INTEGER REFERENCES emp (emp_id), cycle_id INTEGER REFERENCES review_cycles (cycle_id),
    reviewer_id INTEGER REFERENCES emp (emp_id), rating INTEGER);
CREATE TABLE courses (course_id INTEGER PRIMARY KEY, course_title TEXT NOT NULL,
    provider TEXT, hours NUMERIC(5, 1));
CREATE TABLE enrollments (emp_id INTEGER REFERENCES emp (emp_id),
    course_id INTEGER REFERENCES courses (course_id), completed_dt DATE, score INTEGER,
    PRIMARY KEY (emp_id, course_id));
CREATE TABLE skills (skill_id INTEGER PRIMARY KEY, skill_name TEXT NOT NULL);
CREATE TABLE emp_skills (emp_id INTEGER REFERENCES emp (emp_id),
    skill_id INTEGER REFERENCES skills (skill_id), level INTEGER,
    PRIMARY KEY (emp_id, skill_id));
CREATE TABLE requisitions (req_id INTEGER PRIMARY KEY, job_id INTEGER REFERENCES jobs (job_id),
    dept_id INTEGER REFERENCES depts (dept_id), opened_dt DATE, closed_dt DATE,
    hiring_mgr_id INTEGER REFERENCES emp (emp_id));
CREATE TABLE candidates (cand_id INTEGER PRIMARY KEY, full_name TEXT NOT NULL, source TEXT);
CREATE TABLE applications (app_id INTEGER PRIMARY KEY,
    req_id INTEGER REFERENCES requisitions (req_id),
    cand_id INTEGER REFERENCES candidates (cand_id), applied_dt DATE, stage TEXT);
"""


def hr(rng: random.Random) -> str:
    locations = [(1, "Chicago", "Illinois", "United States"),
                 (2, "Austin", "Texas", "United States"), (3, "Dublin", None, "Ireland"),
                 (4, "Bangalore", "Karnataka", "India"), (5, "Toronto", "Ontario", "Canada")]
    depts = [(1, "Engineering", 2, "CC-100"), (2, "Sales", 1, "CC-200"),
             (3, "Finance", 1, "CC-300"), (4, "Human Resources", 3, "CC-400"),
             (5, "Customer Support", 4, "CC-500"), (6, "Marketing", 5, "CC-600")]
    grades = [(1, "G1", 30000, 50000), (2, "G2", 45000, 75000), (3, "G3", 70000, 110000),
              (4, "G4", 100000, 160000), (5, "G5", 150000, 250000)]
    jobs = [(1, "Software Engineer", 3, 0), (2, "Senior Software Engineer", 4, 0),
            (3, "Engineering Manager", 5, 1), (4, "Account Executive", 3, 0),
            (5, "Sales Director", 5, 1), (6, "Financial Analyst", 3, 0),
            (7, "HR Business Partner", 3, 0), (8, "Support Specialist", 2, 0),
            (9, "Support Team Lead", 3, 1), (10, "Marketing Coordinator", 2, 0)]
    job_dept = {1: 1, 2: 1, 3: 1, 4: 2, 5: 2, 6: 3, 7: 4, 8: 5, 9: 5, 10: 6}
    firsts = ["Alice", "Bob", "Carmen", "Deepak", "Elena", "Frank", "Grace", "Hassan", "Ivy",
              "Jamal", "Keiko", "Luis", "Maya", "Niall", "Olivia", "Priya", "Quentin", "Rita",
              "Samuel", "Tanvi"]
    lasts = ["Anderson", "Byrne", "Chen", "Desai", "Evans", "Fischer", "Gomez", "Hughes",
             "Iyer", "Jones", "Kowalski", "Lopez", "Murphy", "Nair", "O'Brien"]
    emps = []
    managers = {3: None, 5: None, 9: None}
    for i in range(1, 81):
        job = rng.choice([1, 1, 2, 4, 4, 6, 7, 8, 8, 10]) if i > 3 else [3, 5, 9][i - 1]
        dept = job_dept[job]
        mgr = None if i <= 3 else {1: 1, 2: 2, 5: 3}.get(dept, 1)
        hire = date(2012, 1, 1) + timedelta(days=rng.randrange(0, 4000))
        term = (hire + timedelta(days=rng.randrange(200, 2000))).isoformat() \
            if rng.random() < 0.15 else None
        emps.append((i, firsts[i % 20], lasts[(i * 3) % 15], rng.choice(["F", "M", "X"]),
                     (date(1965, 1, 1) + timedelta(days=rng.randrange(0, 12000))).isoformat(),
                     hire.isoformat(), term, dept, job, mgr,
                     rng.choice(["full-time", "full-time", "part-time", "contractor"])))
    del managers
    sal, bonus = [], []
    for e in emps:
        grade = jobs[e[8] - 1][2]
        base = rng.uniform(grades[grade - 1][2], grades[grade - 1][3])
        for k, year in enumerate((2021, 2022, 2023)):
            sal.append((e[0], f"{year}-01-01", round(base * (1 + 0.04 * k), -2), "USD"))
            if rng.random() < 0.5:
                bonus.append((len(bonus) + 1, e[0], year, round(base * rng.uniform(0.02, 0.15),
                                                                 -1)))
    leave_types = [(1, "Annual leave", 1), (2, "Sick leave", 1), (3, "Parental leave", 1),
                   (4, "Unpaid leave", 0), (5, "Bereavement", 1)]
    leaves = []
    for r in range(1, 161):
        start = date(2023, 1, 2) + timedelta(days=rng.randrange(0, 350))
        days = rng.randint(1, 10)
        leaves.append((r, rng.randint(1, 80), rng.choice([1, 1, 1, 2, 2, 3, 4, 5]),
                       start.isoformat(), (start + timedelta(days=days - 1)).isoformat(), days,
                       rng.choice(["approved", "approved", "pending", "rejected"])))
    cycles = [(1, "H1 2022", "2022-01-01", "2022-06-30"), (2, "H2 2022", "2022-07-01",
              "2022-12-31"), (3, "H1 2023", "2023-01-01", "2023-06-30"),
              (4, "H2 2023", "2023-07-01", "2023-12-31")]
    reviews = []
    for e in emps:
        for c in range(1, 5):
            if rng.random() < 0.8:
                reviews.append((len(reviews) + 1, e[0], c, e[9] or 1, rng.randint(1, 5)))
    courses = [(1, "Secure Coding Fundamentals", "SANS", 16.0),
               (2, "Negotiation Skills", "Coursera", 8.0), (3, "Advanced Excel", "LinkedIn", 6.5),
               (4, "Leading Teams", "Harvard ManageMentor", 12.0),
               (5, "Kubernetes Basics", "Linux Foundation", 20.0),
               (6, "Workplace Harassment Prevention", "Internal", 2.0)]
    enrollments = sorted({(rng.randint(1, 80), rng.randint(1, 6)) for _ in range(140)})
    enrollments = [(e, c, (date(2023, 1, 1) + timedelta(days=rng.randrange(0, 360))).isoformat()
                    if rng.random() < 0.7 else None, rng.randint(50, 100)) for e, c in enrollments]
    skills = ["Python", "SQL", "Salesforce", "Public Speaking", "Java", "Financial Modeling",
              "Zendesk", "Go", "Copywriting"]
    emp_skills = sorted({(rng.randint(1, 80), rng.randint(1, 9)) for _ in range(160)})
    emp_skills = [(e, s, rng.randint(1, 5)) for e, s in emp_skills]
    reqs = []
    for r in range(1, 21):
        job = rng.randint(1, 10)
        opened = date(2023, 1, 1) + timedelta(days=rng.randrange(0, 300))
        reqs.append((r, job, job_dept[job], opened.isoformat(),
                     (opened + timedelta(days=rng.randint(20, 90))).isoformat()
                     if rng.random() < 0.6 else None, rng.choice([1, 2, 3])))
    cands = [(c, f"{firsts[(c * 7) % 20]} {lasts[(c * 11) % 15]}",
              rng.choice(["referral", "LinkedIn", "job board", "agency", "career fair"]))
             for c in range(1, 61)]
    apps = [(a, rng.randint(1, 20), rng.randint(1, 60),
             (date(2023, 1, 1) + timedelta(days=rng.randrange(0, 330))).isoformat(),
             rng.choice(["applied", "phone screen", "onsite", "offer", "hired", "rejected"]))
            for a in range(1, 121)]
    parts = [HR_DDL, inserts("locations", locations), inserts("depts", depts),
             inserts("job_grades", grades), inserts("jobs", jobs), inserts("emp", emps),
             inserts("sal_history", sal), inserts("bonus_payouts", bonus),
             inserts("leave_types", leave_types), inserts("leave_requests", leaves),
             inserts("review_cycles", cycles), inserts("perf_reviews", reviews),
             inserts("courses", courses), inserts("enrollments", enrollments),
             inserts("skills", [(i + 1, s) for i, s in enumerate(skills)]),
             inserts("emp_skills", emp_skills), inserts("requisitions", reqs),
             inserts("candidates", cands), inserts("applications", apps)]
    return "\n\n".join(parts) + "\n"


# -- finance: retail banking (clients, accounts, cards, loans, transactions) --------------------

FINANCE_DDL = """
CREATE TABLE district (district_id INTEGER PRIMARY KEY, district_name TEXT NOT NULL,
    region TEXT, inhabitants INTEGER, avg_salary INTEGER, unemployment_rate REAL);
CREATE TABLE branch (branch_id INTEGER PRIMARY KEY, branch_name TEXT NOT NULL,
    district_id INTEGER REFERENCES district (district_id));
CREATE TABLE client (client_id INTEGER PRIMARY KEY, full_name TEXT NOT NULL, gender TEXT,
    birth_date DATE, district_id INTEGER REFERENCES district (district_id), segment TEXT);
CREATE TABLE acct_type (acct_type_id INTEGER PRIMARY KEY, type_name TEXT NOT NULL);
CREATE TABLE account (account_id INTEGER PRIMARY KEY,
    branch_id INTEGER REFERENCES branch (branch_id),
    acct_type_id INTEGER REFERENCES acct_type (acct_type_id), opened DATE,
    statement_freq TEXT, currency TEXT);
CREATE TABLE disp (disp_id INTEGER PRIMARY KEY, client_id INTEGER REFERENCES client (client_id),
    account_id INTEGER REFERENCES account (account_id), disp_type TEXT);
CREATE TABLE card (card_id INTEGER PRIMARY KEY, disp_id INTEGER REFERENCES disp (disp_id),
    card_type TEXT, issued DATE, credit_limit NUMERIC(12, 2));
CREATE TABLE trans (trans_id INTEGER PRIMARY KEY,
    account_id INTEGER REFERENCES account (account_id), trans_date DATE, trans_type TEXT,
    operation TEXT, amount NUMERIC(12, 2), balance NUMERIC(12, 2), k_symbol TEXT);
CREATE TABLE loan (loan_id INTEGER PRIMARY KEY, account_id INTEGER REFERENCES account (account_id),
    granted DATE, amount NUMERIC(12, 2), duration_months INTEGER, payments NUMERIC(12, 2),
    status TEXT);
CREATE TABLE loan_repayment (loan_id INTEGER REFERENCES loan (loan_id), due_date DATE,
    paid_date DATE, amount_due NUMERIC(12, 2), amount_paid NUMERIC(12, 2),
    PRIMARY KEY (loan_id, due_date));
CREATE TABLE standing_order (order_id INTEGER PRIMARY KEY,
    account_id INTEGER REFERENCES account (account_id), bank_to TEXT, account_to TEXT,
    amount NUMERIC(12, 2), k_symbol TEXT);
CREATE TABLE merchant (merchant_id INTEGER PRIMARY KEY, merchant_name TEXT NOT NULL, mcc TEXT,
    mcc_desc TEXT);
CREATE TABLE card_txn (card_txn_id INTEGER PRIMARY KEY, card_id INTEGER REFERENCES card (card_id),
    merchant_id INTEGER REFERENCES merchant (merchant_id), txn_ts TIMESTAMP,
    amt NUMERIC(12, 2), is_declined INTEGER);
CREATE TABLE fx_rate (currency TEXT, rate_date DATE, usd_rate REAL,
    PRIMARY KEY (currency, rate_date));
CREATE TABLE kyc_check (check_id INTEGER PRIMARY KEY, client_id INTEGER REFERENCES client (client_id),
    checked_on DATE, outcome TEXT, risk_score INTEGER);
"""


def finance(rng: random.Random) -> str:
    districts = [(1, "Prague", "Bohemia", 1200000, 12500, 0.3),
                 (2, "Brno", "South Moravia", 380000, 9900, 1.9),
                 (3, "Ostrava", "North Moravia", 320000, 10100, 4.5),
                 (4, "Plzen", "West Bohemia", 170000, 9600, 2.1),
                 (5, "Liberec", "North Bohemia", 100000, 9300, 3.2),
                 (6, "Olomouc", "North Moravia", 100000, 8900, 4.1)]
    branches = [(i, f"{d[1]} {suffix}", d[0]) for i, (d, suffix) in enumerate(
        [(districts[k % 6], ["Main", "Old Town", "Riverside"][k // 6]) for k in range(12)],
        start=1)]
    names = ["Jan Novak", "Petra Svobodova", "Tomas Dvorak", "Eva Cerna", "Martin Prochazka",
             "Lucie Kucerova", "Jiri Vesely", "Hana Horakova", "Pavel Nemec", "Klara Pokorna",
             "David Marek", "Tereza Pospisilova", "Lukas Hajek", "Veronika Jelinkova",
             "Ondrej Kral", "Barbora Ruzickova", "Jakub Benes", "Adela Fialova", "Filip Sedlacek",
             "Monika Dolezalova"]
    clients = []
    for c in range(1, 101):
        name = names[c % 20] + ("" if c <= 20 else f" {c}")
        clients.append((c, name, "F" if names[c % 20].endswith("a") else "M",
                        (date(1945, 1, 1) + timedelta(days=rng.randrange(0, 20000))).isoformat(),
                        rng.randint(1, 6), rng.choice(["retail", "retail", "premier", "private"])))
    types = ["checking", "savings", "business", "joint"]
    accounts = [(a, rng.randint(1, 12), rng.randint(1, 4),
                 (date(2015, 1, 1) + timedelta(days=rng.randrange(0, 2500))).isoformat(),
                 rng.choice(["monthly", "weekly", "after transaction"]),
                 rng.choice(["CZK", "CZK", "CZK", "EUR", "USD"])) for a in range(1, 121)]
    disps = []
    for a in range(1, 121):
        disps.append((len(disps) + 1, (a - 1) % 100 + 1, a, "OWNER"))
        if rng.random() < 0.2:
            disps.append((len(disps) + 1, rng.randint(1, 100), a, "DISPONENT"))
    cards = [(len(cards_) + 1, d[0], rng.choice(["classic", "gold", "junior", "platinum"]),
              (date(2018, 1, 1) + timedelta(days=rng.randrange(0, 1800))).isoformat(),
              rng.choice([1000, 2500, 5000, 10000]))
             for cards_ in [[]] for d in disps if rng.random() < 0.5]
    cards = [(i + 1, *c[1:]) for i, c in enumerate(cards)]
    trans = []
    for t in range(1, 1501):
        kind = rng.choice(["credit", "debit", "debit"])
        trans.append((t, rng.randint(1, 120),
                      (date(2022, 1, 1) + timedelta(days=rng.randrange(0, 730))).isoformat(),
                      kind, rng.choice(["cash withdrawal", "remittance to another bank",
                                        "credit card withdrawal", "cash deposit",
                                        "collection from another bank"]),
                      round(rng.uniform(10, 5000), 2), round(rng.uniform(100, 90000), 2),
                      rng.choice(["household", "pension", "insurance payment", "statement",
                                  "interest credited", "loan payment", None])))
    loans, repayments = [], []
    for n in range(1, 41):
        granted = date(2019, 1, 1) + timedelta(days=rng.randrange(0, 1400))
        amount = rng.randint(20, 500) * 1000
        months = rng.choice([12, 24, 36, 48, 60])
        status = rng.choice(["A", "A", "B", "C", "C", "D"])
        loans.append((n, rng.randint(1, 120), granted.isoformat(), amount, months,
                      round(amount / months, 2), status))
        for k in range(1, 4):
            due = granted + timedelta(days=30 * k)
            late = rng.random() < 0.2
            repayments.append((n, due.isoformat(),
                               (due + timedelta(days=rng.randint(5, 40) if late else 0)).isoformat(),
                               round(amount / months, 2),
                               round(amount / months * (0.5 if late else 1), 2)))
    orders = [(o, rng.randint(1, 120), rng.choice(["AB", "CD", "EF", "GH", "IJ"]),
               str(rng.randint(10000000, 99999999)), round(rng.uniform(50, 8000), 2),
               rng.choice(["household", "insurance payment", "leasing", "loan payment"]))
              for o in range(1, 81)]
    merchants = [(1, "Globus Hypermarket", "5411", "Grocery Stores, Supermarkets"),
                 (2, "Shell Station Brno", "5541", "Service Stations"),
                 (3, "Alza.cz", "5732", "Electronics Stores"),
                 (4, "Czech Airlines", "4511", "Airlines, Air Carriers"),
                 (5, "Cafe Louvre", "5812", "Eating Places, Restaurants"),
                 (6, "Hotel Paris Prague", "7011", "Hotels, Motels, Resorts"),
                 (7, "Lekarna Dr. Max", "5912", "Drug Stores and Pharmacies")]
    card_txns = [(t, rng.randint(1, len(cards)), rng.randint(1, 7),
                  f"{(date(2023, 1, 1) + timedelta(days=rng.randrange(0, 365))).isoformat()} "
                  f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:00",
                  round(rng.uniform(3, 900), 2), int(rng.random() < 0.05))
                 for t in range(1, 601)]
    fx = []
    for currency, base in (("CZK", 0.044), ("EUR", 1.08), ("USD", 1.0)):
        d = date(2023, 1, 1)
        while d.year == 2023:
            fx.append((currency, d.isoformat(), round(base * rng.uniform(0.97, 1.03), 5)))
            d += timedelta(days=7)
    kyc = [(k, rng.randint(1, 100),
            (date(2022, 1, 1) + timedelta(days=rng.randrange(0, 700))).isoformat(),
            rng.choice(["pass", "pass", "pass", "review", "fail"]), rng.randint(1, 100))
           for k in range(1, 151)]
    parts = [FINANCE_DDL, inserts("district", districts), inserts("branch", branches),
             inserts("client", clients),
             inserts("acct_type", [(i + 1, v) for i, v in enumerate(types)]),
             inserts("account", accounts), inserts("disp", disps), inserts("card", cards),
             inserts("trans", trans), inserts("loan", loans),
             inserts("loan_repayment", repayments), inserts("standing_order", orders),
             inserts("merchant", merchants), inserts("card_txn", card_txns),
             inserts("fx_rate", fx), inserts("kyc_check", kyc)]
    return "\n\n".join(parts) + "\n"




# -- enterprise: the four schemas above inside one wide schema of look-alike tables -------------

#: Modules next to each domain, and the things their tables hold: look-alikes of the real
#: tables ("fantasy_player_hist" beside "player"), as a grown warehouse has them.
NEIGHBOURS = {
    "cricket": (["ticketing", "broadcast", "merch", "fantasy", "academy"],
                ["player", "match", "venue", "team", "season", "umpire", "sponsor", "fixture",
                 "squad", "pitch_report"]),
    "retail": (["ecom", "pos", "wms", "loyalty", "pricing"],
               ["store", "sku", "basket", "promo", "shopper", "vendor", "stock", "return",
                "planogram", "coupon"]),
    "hr": (["payroll", "benefits", "recruit", "lms", "timekeeping"],
           ["emp", "dept", "job", "salary", "leave", "review", "course", "candidate", "shift",
            "badge"]),
    "finance": (["risk", "collections", "treasury", "cards", "aml"],
                ["client", "account", "loan", "card", "trans", "branch", "merchant", "district",
                 "collateral", "limit"]),
    "erp": (["gl", "ap", "ar", "crm", "mfg", "qa", "proj", "asset", "tax", "tms"],
            ["journal", "invoice", "payment", "ledger", "customer", "work_order", "inspection",
             "project", "task", "timesheet", "fixed_asset", "tax_code", "carrier", "route",
             "budget", "forecast", "document", "approval"]),
}
SUFFIXES = ["", "_hdr", "_line", "_hist", "_audit", "_stg", "_xref", "_status", "_type",
            "_note", "_attr", "_snapshot", "_archive", "_map", "_log", "_dim", "_fact"]


def enterprise(rng: random.Random, tables: int = 1000) -> str:
    """The four analytics schemas in one database, padded with look-alike tables to
    ``tables``."""
    parts = [cricket(random.Random("context-sets-cricket")),
             retail(random.Random("context-sets-retail")),
             hr(random.Random("context-sets-hr")),
             finance(random.Random("context-sets-finance"))]
    real = sum(text.count("CREATE TABLE") for text in parts)
    names: list[str] = []
    pool = [(m, t, s) for modules, things in NEIGHBOURS.values() for m in modules
            for t in things for s in SUFFIXES]
    rng.shuffle(pool)
    for module, thing, suffix in pool[: tables - real]:
        names.append(f"{module}_{thing}{suffix}")
    statements = []
    for i, name in enumerate(names):
        thing = name.split("_", 1)[1]
        parent = names[rng.randrange(0, i)] if i else None
        reference = f" REFERENCES {parent} (id)" if parent else ""
        statements.append(
            f"CREATE TABLE {name} (id INTEGER PRIMARY KEY, parent_id INTEGER{reference}, "
            f"code TEXT, {thing.split('_')[0]}_desc TEXT, amount NUMERIC(12, 2), "
            f"status TEXT, valid_from DATE, updated_by TEXT);")
        rows = [(r + 1, r + 1 if parent else None, f"{name[:3].upper()}-{r}",
                 f"{thing.replace('_', ' ')} {rng.choice(['alpha', 'beta', 'gamma', 'delta'])}"
                 f" {r}", round(rng.uniform(1, 999), 2), rng.choice(["active", "inactive"]),
                 "2023-01-01", rng.choice(["etl", "batch", "admin"])) for r in range(3)]
        statements.append(inserts(name, rows))
    return "\n\n".join(parts + statements) + "\n"


# -- catalog: many small databases of several domains, overlapping table names ------------------

PEOPLE = ["Ada", "Bruno", "Celia", "Dmitri", "Esme", "Fatima", "Goran", "Helga", "Ibrahim",
          "Juno", "Kai", "Leila", "Mateo", "Nadia", "Oskar", "Pia", "Rafael", "Selma", "Tobias",
          "Ulla", "Viktor", "Wanda", "Xavier", "Yara", "Zeno"]
SURNAMES = ["Abbott", "Baker", "Castro", "Dunn", "Eklund", "Ferreira", "Grant", "Holm",
            "Ito", "Jensen", "Kaur", "Lindqvist", "Moreau", "Nakamura", "Osei", "Petrov"]
CITIES = ["Aarhus", "Bilbao", "Cork", "Dresden", "Eindhoven", "Faro", "Graz", "Hamar",
          "Izmir", "Jena", "Kaunas", "Leuven", "Malmo", "Nantes", "Oulu", "Porto", "Quimper",
          "Rijeka", "Split", "Tartu", "Umea", "Valletta", "Wroclaw", "Ypres", "Zadar",
          "Ghent", "Turku", "Brno", "Lucerne", "Salzburg"]

#: Domain -> (variant names, tables: name -> columns (name, kind)), where kind is a value
#: pool name, "int", "money", "date", or "fk:<table>".
CATALOG_DOMAINS: dict[str, tuple[list[str], dict[str, list[tuple[str, str]]]]] = {
    "hospital": (["st_anne_hospital", "riverside_clinic", "northgate_medical"], {
        "wards": [("ward_name", "ward"), ("floor", "int")],
        "doctors": [("full_name", "person"), ("specialty", "specialty")],
        "patients": [("full_name", "person"), ("city", "city"), ("birth_date", "date")],
        "admissions": [("patient_id", "fk:patients"), ("ward_id", "fk:wards"),
                       ("doctor_id", "fk:doctors"), ("admitted_on", "date")]}),
    "school": (["oakwood_school", "lakeside_academy", "hillcrest_high"], {
        "teachers": [("full_name", "person"), ("subject", "subject")],
        "classes": [("class_name", "classname"), ("teacher_id", "fk:teachers")],
        "students": [("full_name", "person"), ("class_id", "fk:classes")],
        "grades": [("student_id", "fk:students"), ("subject", "subject"), ("mark", "int")]}),
    "airline": (["skyway_air", "coastal_airlines", "polar_jet"], {
        "airports": [("iata_code", "iata"), ("city", "city")],
        "flights": [("flight_no", "flightno"), ("origin_id", "fk:airports"),
                    ("dest_id", "fk:airports"), ("departs_on", "date")],
        "passengers": [("full_name", "person"), ("frequent_flyer_tier", "tier")],
        "bookings": [("flight_id", "fk:flights"), ("passenger_id", "fk:passengers"),
                     ("fare", "money"), ("seat_class", "seatclass")]}),
    "hotel": (["harbour_view_hotel", "alpine_lodge", "city_suites"], {
        "rooms": [("room_no", "int"), ("room_type", "roomtype"), ("nightly_rate", "money")],
        "guests": [("full_name", "person"), ("country", "country")],
        "reservations": [("guest_id", "fk:guests"), ("room_id", "fk:rooms"),
                         ("check_in", "date"), ("nights", "int")],
        "employees": [("full_name", "person"), ("position", "hotelrole")]}),
    "library": (["central_library", "university_library", "village_library"], {
        "authors": [("full_name", "person")],
        "books": [("title", "booktitle"), ("author_id", "fk:authors"), ("genre", "genre")],
        "members": [("full_name", "person"), ("city", "city")],
        "loans": [("book_id", "fk:books"), ("member_id", "fk:members"), ("due_date", "date")]}),
    "gym": (["ironworks_gym", "pulse_fitness", "summit_club"], {
        "members": [("full_name", "person"), ("plan", "gymplan")],
        "trainers": [("full_name", "person"), ("discipline", "discipline")],
        "sessions": [("trainer_id", "fk:trainers"), ("member_id", "fk:members"),
                     ("session_date", "date"), ("minutes", "int")],
        "payments": [("member_id", "fk:members"), ("amount", "money"), ("paid_on", "date")]}),
    "restaurant": (["trattoria_roma", "sakura_sushi", "green_bowl"], {
        "dishes": [("dish_name", "dish"), ("price", "money"), ("course", "course")],
        "tables_": [("table_no", "int"), ("seats", "int")],
        "orders": [("table_id", "fk:tables_"), ("ordered_at", "date"), ("waiter", "person")],
        "order_items": [("order_id", "fk:orders"), ("dish_id", "fk:dishes"), ("qty", "int")]}),
    "car_rental": (["swift_rentals", "roadstar_cars", "metro_autos"], {
        "vehicles": [("plate", "plate"), ("model", "carmodel"), ("daily_rate", "money")],
        "customers": [("full_name", "person"), ("licence_no", "plate")],
        "branches": [("city", "city")],
        "rentals": [("vehicle_id", "fk:vehicles"), ("customer_id", "fk:customers"),
                    ("branch_id", "fk:branches"), ("start_date", "date"), ("days", "int")]}),
    "real_estate": (["keystone_realty", "bayside_homes", "urban_nest"], {
        "agents": [("full_name", "person")],
        "properties": [("address", "street"), ("city", "city"), ("bedrooms", "int"),
                       ("asking_price", "money")],
        "listings": [("property_id", "fk:properties"), ("agent_id", "fk:agents"),
                     ("listed_on", "date")],
        "offers": [("listing_id", "fk:listings"), ("amount", "money"), ("buyer", "person")]}),
    "football": (["premier_stats", "lower_league", "womens_league"], {
        "clubs": [("club_name", "club"), ("city", "city")],
        "players": [("full_name", "person"), ("club_id", "fk:clubs"), ("position", "fpos")],
        "fixtures": [("home_club_id", "fk:clubs"), ("away_club_id", "fk:clubs"),
                     ("kickoff", "date"), ("home_goals", "int"), ("away_goals", "int")],
        "goals": [("fixture_id", "fk:fixtures"), ("player_id", "fk:players"),
                  ("minute", "int")]}),
    "streaming": (["tunecloud", "beatbox_music", "echo_stream"], {
        "artists": [("artist_name", "band")],
        "songs": [("title", "song"), ("artist_id", "fk:artists"), ("seconds", "int")],
        "listeners": [("username", "username"), ("country", "country")],
        "plays": [("song_id", "fk:songs"), ("listener_id", "fk:listeners"),
                  ("played_on", "date")]}),
    "cinema": (["grand_cinema", "indie_screens", "drive_in"], {
        "films": [("title", "film"), ("rating", "filmrating"), ("minutes", "int")],
        "screens": [("screen_name", "screen"), ("capacity", "int")],
        "showings": [("film_id", "fk:films"), ("screen_id", "fk:screens"),
                     ("starts_at", "date")],
        "tickets": [("showing_id", "fk:showings"), ("price", "money"), ("buyer", "person")]}),
    "insurance": (["safeguard_insurance", "anchor_mutual", "trustline"], {
        "policyholders": [("full_name", "person"), ("city", "city")],
        "policies": [("holder_id", "fk:policyholders"), ("product", "insproduct"),
                     ("premium", "money"), ("starts_on", "date")],
        "claims": [("policy_id", "fk:policies"), ("claimed_on", "date"), ("amount", "money"),
                   ("cause", "cause")],
        "adjusters": [("full_name", "person")]}),
    "logistics": (["freightline", "parcel_go", "cargo_hub"], {
        "depots": [("city", "city")],
        "trucks": [("plate", "plate"), ("depot_id", "fk:depots"), ("capacity_kg", "int")],
        "drivers": [("full_name", "person"), ("depot_id", "fk:depots")],
        "deliveries": [("truck_id", "fk:trucks"), ("driver_id", "fk:drivers"),
                       ("delivered_on", "date"), ("weight_kg", "int")]}),
    "pharmacy": (["wellcare_pharmacy", "corner_chemist", "medplus"], {
        "medicines": [("brand_name", "medicine"), ("form", "medform"), ("price", "money")],
        "prescriptions": [("patient", "person"), ("medicine_id", "fk:medicines"),
                          ("prescriber", "person"), ("issued_on", "date")],
        "suppliers": [("supplier_name", "company")],
        "stock": [("medicine_id", "fk:medicines"), ("supplier_id", "fk:suppliers"),
                  ("units", "int")]}),
    "university": (["polytechnic", "state_university", "open_university"], {
        "faculties": [("faculty_name", "faculty")],
        "courses": [("course_title", "ucourse"), ("faculty_id", "fk:faculties"),
                    ("credits", "int")],
        "students": [("full_name", "person"), ("enrolled_year", "int")],
        "enrolments": [("student_id", "fk:students"), ("course_id", "fk:courses"),
                       ("grade", "lettergrade")]}),
    "veterinary": (["paws_clinic", "farm_vets", "city_animal_hospital"], {
        "owners": [("full_name", "person"), ("city", "city")],
        "pets": [("pet_name", "petname"), ("species", "species"), ("owner_id", "fk:owners")],
        "visits": [("pet_id", "fk:pets"), ("visit_date", "date"), ("reason", "vetreason"),
                   ("fee", "money")]}),
    "energy": (["gridco", "solarshare", "windpower_coop"], {
        "customers": [("full_name", "person"), ("city", "city"), ("tariff", "tariff")],
        "meters": [("customer_id", "fk:customers"), ("serial", "plate")],
        "readings": [("meter_id", "fk:meters"), ("read_on", "date"), ("kwh", "int")],
        "bills": [("customer_id", "fk:customers"), ("amount", "money"), ("due_on", "date")]}),
}

VALUE_POOLS = {
    "ward": ["Cardiology", "Oncology", "Maternity", "Paediatrics", "Orthopaedics", "Neurology",
             "Dermatology", "Geriatrics", "Radiology"],
    "specialty": ["cardiologist", "oncologist", "surgeon", "neurologist", "paediatrician",
                  "anaesthetist"],
    "subject": ["Mathematics", "Biology", "History", "Chemistry", "French", "Geography",
                "Physics", "Music"],
    "classname": ["Year 7 Falcons", "Year 8 Otters", "Year 9 Lynx", "Year 10 Herons",
                  "Year 11 Badgers", "Year 7 Wolves", "Year 8 Foxes", "Year 9 Hawks"],
    "iata": ["AAR", "BIO", "ORK", "DRS", "EIN", "FAO", "GRZ", "HMR", "ADB", "KUN", "LIS", "OPO",
             "SPU", "TLL", "UME", "MLA", "WRO"],
    "flightno": [f"{p}{n}" for p in ("SK", "CA", "PJ") for n in range(100, 130)],
    "tier": ["basic", "silver", "gold", "platinum"],
    "seatclass": ["economy", "premium economy", "business", "first"],
    "roomtype": ["single", "double", "twin", "suite", "family room"],
    "country": ["Norway", "Portugal", "Japan", "Canada", "Kenya", "Chile", "Estonia",
                "Morocco", "Vietnam", "Iceland"],
    "hotelrole": ["receptionist", "concierge", "housekeeper", "night manager", "chef"],
    "booktitle": ["The Silent Orchard", "Salt and Cedar", "A Map of Small Winds",
                  "The Glass Cartographer", "Nine Lanterns", "River of Quiet Bells",
                  "The Copper Meridian", "Ashes of the Tern", "Under the Tamarind",
                  "The Last Lighthouse Keeper", "Paper Moons", "The Orchid Thief's Daughter"],
    "genre": ["mystery", "poetry", "science fiction", "biography", "romance", "history"],
    "gymplan": ["monthly", "annual", "off-peak", "student", "pay as you go"],
    "discipline": ["yoga", "crossfit", "pilates", "boxing", "spinning", "powerlifting"],
    "dish": ["Carbonara", "Margherita Pizza", "Tiramisu", "Salmon Nigiri", "Miso Ramen",
             "Matcha Mochi", "Quinoa Bowl", "Falafel Wrap", "Kale Caesar", "Osso Buco",
             "Tuna Tataki", "Acai Smoothie"],
    "course": ["starter", "main", "dessert", "drink"],
    "plate": [f"{a}{b}-{n:03d}" for a in "KLMN" for b in "PRST" for n in (11, 42, 77)],
    "carmodel": ["Toyota Corolla", "VW Golf", "Tesla Model 3", "Fiat 500", "Volvo XC60",
                 "Renault Clio", "BMW X1", "Skoda Octavia"],
    "street": [f"{n} {s}" for n in (4, 12, 27, 58) for s in ("Elm Street", "Harbour Road",
                                                            "Mill Lane", "Chapel Row")],
    "club": ["Harbour Town FC", "Rovers United", "Athletic Vale", "Ironbridge City",
             "Northfield Wanderers", "Kingsport Albion", "Mossley Rangers", "Redcliffe FC",
             "Eastgate Athletic", "Westmoor Town", "Saltash United", "Brookfield Celtic"],
    "fpos": ["goalkeeper", "defender", "midfielder", "forward"],
    "band": ["The Velvet Foxes", "Neon Harbor", "Glass Animals Club", "Lunar Tides",
             "Paper Kites Orchestra", "Static Bloom", "The Midnight Owls", "Copper Sky",
             "Indigo Parade"],
    "song": ["Electric Dawn", "Slow Satellites", "Golden Hour Drive", "Paper Hearts",
             "Northern Lights", "Velvet Rain", "Ocean Static", "City of Glass",
             "Wildflower Radio", "Silver Lining Blues"],
    "username": [f"{w}{n}" for w in ("beatfan", "vinyljunkie", "nightowl", "groovy")
                 for n in (7, 21, 88, 303)],
    "film": ["The Crimson Harbor", "Midnight in Lisbon", "Dust and Diamonds",
             "The Clockmaker's Son", "Frozen Tide", "A Quiet Storm", "Neon Samurai",
             "The Paper Garden", "Starfall", "Echoes of Kyoto"],
    "filmrating": ["U", "PG", "12A", "15", "18"],
    "screen": ["Screen 1", "Screen 2", "IMAX Hall", "Studio Room", "Rooftop Screen"],
    "insproduct": ["home contents", "motor comprehensive", "travel", "pet cover",
                   "life term"],
    "cause": ["flood", "theft", "collision", "fire", "storm damage", "burst pipe"],
    "medicine": ["Paracetamol 500", "Ibuprofen 200", "Amoxicillin 250", "Cetirizine 10",
                 "Omeprazole 20", "Salbutamol Inhaler", "Metformin 500", "Atorvastatin 40"],
    "medform": ["tablet", "capsule", "syrup", "inhaler", "cream"],
    "company": ["Nordic Pharma", "Medisource Ltd", "Apex Health Supply", "Vitalis Trading"],
    "faculty": ["Faculty of Engineering", "Faculty of Law", "Faculty of Medicine",
                "Faculty of Arts", "Faculty of Economics"],
    "ucourse": ["Linear Algebra", "Contract Law", "Human Anatomy", "Medieval Poetry",
                "Macroeconomics", "Thermodynamics", "Criminal Law", "Organic Chemistry",
                "Art History", "Game Theory"],
    "lettergrade": ["A", "B", "C", "D", "E", "F"],
    "petname": ["Biscuit", "Luna", "Pepper", "Rocky", "Mochi", "Ziggy", "Bramble", "Nala",
                "Pickles", "Juniper"],
    "species": ["dog", "cat", "rabbit", "horse", "parrot", "guinea pig"],
    "vetreason": ["vaccination", "dental check", "limping", "skin allergy", "neutering",
                  "annual check-up"],
    "tariff": ["fixed rate", "green tariff", "economy 7", "variable"],
}


def _catalog_value(kind: str, rng: random.Random, variant: int) -> object:
    if kind == "int":
        return rng.randint(1, 120)
    if kind == "money":
        return round(rng.uniform(5, 900), 2)
    if kind == "date":
        return (date(2023, 1, 1) + timedelta(days=rng.randrange(0, 365))).isoformat()
    if kind == "person":
        return f"{rng.choice(PEOPLE)} {rng.choice(SURNAMES)}"
    if kind == "city":
        return CITIES[(variant * 10 + rng.randrange(0, 10)) % len(CITIES)]
    pool = VALUE_POOLS[kind]
    return pool[rng.randrange(0, len(pool))]


def catalog_database(domain: str, variant: int, rng: random.Random) -> str:
    """One small database of ``domain`` (variant 0, 1, 2: same tables, other rows)."""
    _, tables = CATALOG_DOMAINS[domain]
    statements = []
    for table, columns in tables.items():
        cols = ["id INTEGER PRIMARY KEY"]
        for name, kind in columns:
            if kind.startswith("fk:"):
                cols.append(f"{name} INTEGER REFERENCES {kind[3:]} (id)")
            else:
                cols.append(f"{name} {'INTEGER' if kind == 'int' else 'NUMERIC(10, 2)' if kind == 'money' else 'TEXT'}")
        statements.append(f"CREATE TABLE {table} ({', '.join(cols)});")
        rows = []
        for r in range(8):
            row: list[object] = [r + 1]
            for _name, kind in columns:
                row.append(rng.randint(1, 8) if kind.startswith("fk:")
                           else _catalog_value(kind, rng, variant))
            rows.append(tuple(row))
        statements.append(inserts(table, rows))
    return "\n".join(statements) + "\n"


def write_catalog() -> None:
    folder = OUT / "catalog"
    folder.mkdir(parents=True, exist_ok=True)
    for domain, (variants, _tables) in CATALOG_DOMAINS.items():
        for v, db_id in enumerate(variants):
            text = catalog_database(domain, v, random.Random(f"catalog-{db_id}"))
            (folder / f"{db_id}.sql").write_text(text, encoding="utf-8")



#: Domain -> questions: (question with {v}, gold SQL with {v}, the table and column {v} comes
#: from). Values are taken from the generated rows, so some name a row only one database has
#: and some could be asked of every database of the domain (the benchmark tells them apart).
CATALOG_QUESTIONS: dict[str, list[tuple[str, str, str, str]]] = {
    "hospital": [
        ("How many patients were admitted to the {v} ward?",
         "SELECT COUNT(*) FROM admissions a JOIN wards w ON w.id = a.ward_id "
         "WHERE w.ward_name = '{v}'", "wards", "ward_name"),
        ("Which doctor treated {v}?",
         "SELECT d.full_name FROM admissions a JOIN doctors d ON d.id = a.doctor_id "
         "JOIN patients p ON p.id = a.patient_id WHERE p.full_name = '{v}'",
         "patients", "full_name")],
    "school": [
        ("What are the average marks in {v}?",
         "SELECT AVG(mark) FROM grades WHERE subject = '{v}'", "grades", "subject"),
        ("Who teaches the class {v}?",
         "SELECT t.full_name FROM classes c JOIN teachers t ON t.id = c.teacher_id "
         "WHERE c.class_name = '{v}'", "classes", "class_name")],
    "airline": [
        ("How many passengers are booked on flight {v}?",
         "SELECT COUNT(*) FROM bookings b JOIN flights f ON f.id = b.flight_id "
         "WHERE f.flight_no = '{v}'", "flights", "flight_no"),
        ("What is the average fare in {v} class?",
         "SELECT AVG(fare) FROM bookings WHERE seat_class = '{v}'", "bookings", "seat_class")],
    "hotel": [
        ("How many nights did guests from {v} stay?",
         "SELECT SUM(r.nights) FROM reservations r JOIN guests g ON g.id = r.guest_id "
         "WHERE g.country = '{v}'", "guests", "country"),
        ("What does a {v} cost per night on average?",
         "SELECT AVG(nightly_rate) FROM rooms WHERE room_type = '{v}'", "rooms", "room_type")],
    "library": [
        ("Who wrote {v}?",
         "SELECT a.full_name FROM books b JOIN authors a ON a.id = b.author_id "
         "WHERE b.title = '{v}'", "books", "title"),
        ("How many loans are there of {v} books?",
         "SELECT COUNT(*) FROM loans l JOIN books b ON b.id = l.book_id WHERE b.genre = '{v}'",
         "books", "genre")],
    "gym": [
        ("How many minutes of {v} sessions were run?",
         "SELECT SUM(s.minutes) FROM sessions s JOIN trainers t ON t.id = s.trainer_id "
         "WHERE t.discipline = '{v}'", "trainers", "discipline"),
        ("How much has {v} paid in membership fees?",
         "SELECT SUM(p.amount) FROM payments p JOIN members m ON m.id = p.member_id "
         "WHERE m.full_name = '{v}'", "members", "full_name")],
    "restaurant": [
        ("How many portions of {v} were ordered?",
         "SELECT SUM(i.qty) FROM order_items i JOIN dishes d ON d.id = i.dish_id "
         "WHERE d.dish_name = '{v}'", "dishes", "dish_name"),
        ("Which tables did {v} serve?",
         "SELECT DISTINCT t.table_no FROM orders o JOIN tables_ t ON t.id = o.table_id "
         "WHERE o.waiter = '{v}'", "orders", "waiter")],
    "car_rental": [
        ("How many days was the {v} rented out in total?",
         "SELECT SUM(r.days) FROM rentals r JOIN vehicles v ON v.id = r.vehicle_id "
         "WHERE v.model = '{v}'", "vehicles", "model"),
        ("How many rentals started at the {v} branch?",
         "SELECT COUNT(*) FROM rentals r JOIN branches b ON b.id = r.branch_id "
         "WHERE b.city = '{v}'", "branches", "city")],
    "real_estate": [
        ("What offers were made on {v}?",
         "SELECT o.amount FROM offers o JOIN listings l ON l.id = o.listing_id "
         "JOIN properties p ON p.id = l.property_id WHERE p.address = '{v}'",
         "properties", "address"),
        ("Which properties does agent {v} list?",
         "SELECT p.address FROM listings l JOIN agents a ON a.id = l.agent_id "
         "JOIN properties p ON p.id = l.property_id WHERE a.full_name = '{v}'",
         "agents", "full_name")],
    "football": [
        ("How many goals has {v} scored?",
         "SELECT COUNT(*) FROM goals g JOIN players p ON p.id = g.player_id "
         "WHERE p.full_name = '{v}'", "players", "full_name"),
        ("How many home games did {v} play?",
         "SELECT COUNT(*) FROM fixtures f JOIN clubs c ON c.id = f.home_club_id "
         "WHERE c.club_name = '{v}'", "clubs", "club_name")],
    "streaming": [
        ("How many times was {v} played?",
         "SELECT COUNT(*) FROM plays p JOIN songs s ON s.id = p.song_id WHERE s.title = '{v}'",
         "songs", "title"),
        ("Which songs does {v} have?",
         "SELECT s.title FROM songs s JOIN artists a ON a.id = s.artist_id "
         "WHERE a.artist_name = '{v}'", "artists", "artist_name")],
    "cinema": [
        ("How many tickets were sold for {v}?",
         "SELECT COUNT(*) FROM tickets t JOIN showings s ON s.id = t.showing_id "
         "JOIN films f ON f.id = s.film_id WHERE f.title = '{v}'", "films", "title"),
        ("How many seats does {v} have?",
         "SELECT capacity FROM screens WHERE screen_name = '{v}'", "screens", "screen_name")],
    "insurance": [
        ("What was paid out for {v} claims?",
         "SELECT SUM(amount) FROM claims WHERE cause = '{v}'", "claims", "cause"),
        ("Which policies does {v} hold?",
         "SELECT p.product FROM policies p JOIN policyholders h ON h.id = p.holder_id "
         "WHERE h.full_name = '{v}'", "policyholders", "full_name")],
    "logistics": [
        ("How many kilos were delivered by trucks from the {v} depot?",
         "SELECT SUM(d.weight_kg) FROM deliveries d JOIN trucks t ON t.id = d.truck_id "
         "JOIN depots p ON p.id = t.depot_id WHERE p.city = '{v}'", "depots", "city"),
        ("How many deliveries did {v} drive?",
         "SELECT COUNT(*) FROM deliveries d JOIN drivers r ON r.id = d.driver_id "
         "WHERE r.full_name = '{v}'", "drivers", "full_name")],
    "pharmacy": [
        ("How many prescriptions were written for {v}?",
         "SELECT COUNT(*) FROM prescriptions p JOIN medicines m ON m.id = p.medicine_id "
         "WHERE m.brand_name = '{v}'", "medicines", "brand_name"),
        ("How many units does {v} supply?",
         "SELECT SUM(s.units) FROM stock s JOIN suppliers p ON p.id = s.supplier_id "
         "WHERE p.supplier_name = '{v}'", "suppliers", "supplier_name")],
    "university": [
        ("How many students take {v}?",
         "SELECT COUNT(*) FROM enrolments e JOIN courses c ON c.id = e.course_id "
         "WHERE c.course_title = '{v}'", "courses", "course_title"),
        ("How many credits does the {v} offer?",
         "SELECT SUM(c.credits) FROM courses c JOIN faculties f ON f.id = c.faculty_id "
         "WHERE f.faculty_name = '{v}'", "faculties", "faculty_name")],
    "veterinary": [
        ("When did {v} last come in, and why?",
         "SELECT v.visit_date, v.reason FROM visits v JOIN pets p ON p.id = v.pet_id "
         "WHERE p.pet_name = '{v}' ORDER BY v.visit_date DESC LIMIT 1", "pets", "pet_name"),
        ("How much did visits for a {v} bring in?",
         "SELECT SUM(v.fee) FROM visits v WHERE v.reason = '{v}'", "visits", "reason")],
    "energy": [
        ("How many customers are on the {v}?",
         "SELECT COUNT(*) FROM customers WHERE tariff = '{v}'", "customers", "tariff"),
        ("How many kWh did {v} use?",
         "SELECT SUM(r.kwh) FROM readings r JOIN meters m ON m.id = r.meter_id "
         "JOIN customers c ON c.id = m.customer_id WHERE c.full_name = '{v}'",
         "customers", "full_name")],
}


def catalog_questions() -> list[dict]:
    """Questions for every catalog database, values read from its rows."""
    import sqlite3

    out = []
    for domain, (variants, _tables) in CATALOG_DOMAINS.items():
        for db_id in variants:
            conn = sqlite3.connect(":memory:")
            conn.executescript((OUT / "catalog" / f"{db_id}.sql").read_text("utf-8"))
            for k, (question, sql, table, column) in enumerate(CATALOG_QUESTIONS[domain]):
                values = [v for (v,) in conn.execute(f"SELECT {column} FROM {table} ORDER BY id")]
                for value in values[k + 2:] + values[:k + 2]:  # the first that has an answer
                    rows = conn.execute(sql.format(v=str(value).replace("'", "''"))).fetchall()
                    if rows and rows[0][0] not in (None, 0):
                        break
                out.append({"id": f"{db_id}-{k + 1:02d}", "db_id": db_id,
                            "question": question.format(v=value),
                            "query": sql.format(v=str(value).replace("'", "''")),
                            "category": "value_filter"})
            conn.close()
    return out

DOMAINS = {"cricket": cricket, "retail": retail, "hr": hr, "finance": finance}


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for name, build in DOMAINS.items():
        text = build(random.Random(f"context-sets-{name}"))
        (OUT / f"{name}.sql").write_text(text, encoding="utf-8")
        print(f"{name}: {len(text):,} bytes")
    write_catalog()
    questions = catalog_questions()
    with (OUT / "catalog.jsonl").open("w", encoding="utf-8") as handle:
        handle.writelines(json.dumps(q) + "\n" for q in questions)
    print(f"catalog: {sum(len(v) for v, _ in CATALOG_DOMAINS.values())} databases, "
          f"{len(questions)} questions")


if __name__ == "__main__":
    main()

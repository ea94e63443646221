"""Common analytical SQL on Chinook, written the way people and models write it for DuckDB and
Spark: every query must run through the guard (allowlists included) on the real engine.
A function allowlist that refuses one of these is a regression (tests/test_function_allowlists.py).

Import: ``from analytical_corpus import DUCKDB, SPARK``.
"""

from __future__ import annotations

#: Shared by both engines (standard SQL, same spelling).
COMMON = [
    "SELECT count(*) FROM Track",
    "SELECT Country, count(*) AS n FROM Customer GROUP BY Country ORDER BY n DESC LIMIT 5",
    "SELECT g.Name, sum(il.UnitPrice * il.Quantity) AS revenue FROM InvoiceLine il "
    "JOIN Track t ON t.TrackId = il.TrackId JOIN Genre g ON g.GenreId = t.GenreId "
    "GROUP BY g.Name HAVING sum(il.UnitPrice * il.Quantity) > 10 ORDER BY revenue DESC",
    "SELECT ar.Name, count(DISTINCT al.AlbumId) FROM Artist ar LEFT JOIN Album al "
    "ON al.ArtistId = ar.ArtistId GROUP BY ar.Name",
    "WITH totals AS (SELECT CustomerId, sum(Total) AS spent FROM Invoice GROUP BY CustomerId) "
    "SELECT c.FirstName, c.LastName, t.spent FROM totals t JOIN Customer c "
    "ON c.CustomerId = t.CustomerId ORDER BY t.spent DESC LIMIT 3",
    "SELECT CustomerId, Total, rank() OVER (PARTITION BY CustomerId ORDER BY Total DESC) AS r, "
    "sum(Total) OVER (PARTITION BY CustomerId ORDER BY InvoiceDate ROWS BETWEEN UNBOUNDED "
    "PRECEDING AND CURRENT ROW) AS running, lag(Total) OVER (ORDER BY InvoiceId) AS previous, "
    "row_number() OVER (ORDER BY InvoiceId) AS rn, dense_rank() OVER (ORDER BY Total) AS dr, "
    "ntile(4) OVER (ORDER BY Total) AS q FROM Invoice",
    "SELECT Name FROM Track WHERE Milliseconds > (SELECT avg(Milliseconds) FROM Track)",
    "SELECT Name FROM Artist WHERE ArtistId IN (SELECT ArtistId FROM Album) AND NOT EXISTS "
    "(SELECT 1 FROM Album a WHERE a.ArtistId = Artist.ArtistId AND a.Title LIKE 'Z%')",
    "SELECT CASE WHEN Milliseconds < 180000 THEN 'short' WHEN Milliseconds < 300000 "
    "THEN 'medium' ELSE 'long' END AS length_class, count(*) FROM Track GROUP BY 1",
    "SELECT coalesce(Company, 'private') AS company, nullif(State, '') AS state, "
    "upper(Country), lower(City), length(Email), trim(FirstName), substring(LastName, 1, 3), "
    "replace(Phone, ' ', ''), concat(FirstName, ' ', LastName), FirstName || ' ' || LastName "
    "FROM Customer",
    "SELECT round(avg(Total), 2), min(Total), max(Total), stddev(Total), sum(Total), "
    "count(DISTINCT BillingCountry) FROM Invoice",
    "SELECT abs(-1), ceil(1.5), floor(1.5), power(2, 3), sqrt(16), ln(10), exp(1), mod(7, 3), "
    "greatest(1, 2), least(1, 2), sign(-2)",
    "SELECT count(*) FILTER (WHERE Total > 5) AS big, count(*) AS all_invoices FROM Invoice",
    "SELECT BillingCountry, BillingCity, sum(Total) FROM Invoice "
    "GROUP BY ROLLUP (BillingCountry, BillingCity)",
    "SELECT BillingCountry, sum(Total) FROM Invoice GROUP BY GROUPING SETS ((BillingCountry), ())",
    "SELECT CAST(Total AS INTEGER), CAST(InvoiceDate AS DATE), TRY_CAST(BillingPostalCode "
    "AS INTEGER), CAST(Total AS DECIMAL(12, 3)), CAST(InvoiceId AS VARCHAR(20)) FROM Invoice",
    "SELECT EXTRACT(YEAR FROM InvoiceDate) AS y, count(*) FROM Invoice GROUP BY 1 ORDER BY 1",
    "SELECT * FROM (VALUES (1, 'a'), (2, 'b')) AS v(id, label)",
    "WITH RECURSIVE chain(id, boss, depth) AS (SELECT EmployeeId, ReportsTo, 0 FROM Employee "
    "WHERE ReportsTo IS NULL UNION ALL SELECT e.EmployeeId, e.ReportsTo, c.depth + 1 "
    "FROM Employee e JOIN chain c ON e.ReportsTo = c.id) SELECT * FROM chain",
    "SELECT Name FROM Genre UNION SELECT Name FROM MediaType EXCEPT SELECT 'Rock' "
    "INTERSECT SELECT 'Rock'",
    "SELECT t.Name, first_value(t.Name) OVER w, last_value(t.Name) OVER w, "
    "nth_value(t.Name, 2) OVER w, percent_rank() OVER w, cume_dist() OVER w, lead(t.Name) "
    "OVER w FROM Track t WINDOW w AS (PARTITION BY t.AlbumId ORDER BY t.TrackId)",
    "SELECT Name FROM Track WHERE Composer IS NOT NULL AND Name BETWEEN 'A' AND 'C' "
    "AND GenreId IN (1, 2, 3) AND Name NOT LIKE '%Live%' ORDER BY Name NULLS LAST",
    "SELECT Title FROM Album a WHERE EXISTS (SELECT 1 FROM Track t WHERE t.AlbumId = a.AlbumId "
    "AND t.Milliseconds > 600000)",
    "SELECT CustomerId, count(*) FROM Invoice GROUP BY CustomerId HAVING count(*) >= 7 "
    "ORDER BY 2 DESC, 1",
    "SELECT e.FirstName, m.FirstName AS manager FROM Employee e LEFT JOIN Employee m "
    "ON e.ReportsTo = m.EmployeeId",
    "SELECT a.Title, t.Name FROM Album a CROSS JOIN Track t WHERE a.AlbumId = t.AlbumId "
    "AND a.AlbumId = 1",
    "SELECT InvoiceId FROM Invoice i JOIN Customer c USING (CustomerId) WHERE c.Country = 'USA'",
    "SELECT sum(CASE WHEN Country = 'USA' THEN 1 ELSE 0 END) * 100.0 / count(*) FROM Customer",
    "SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY Total) FROM Invoice",
    "SELECT any_value(Name), count(*) FROM Track GROUP BY AlbumId",
    "SELECT Name, position('a' IN Name), char_length(Name) FROM Artist",
]

DUCKDB = COMMON + [
    "SELECT date_trunc('month', InvoiceDate) AS m, sum(Total) FROM Invoice GROUP BY ALL "
    "ORDER BY m",
    "SELECT strftime(InvoiceDate, '%Y-%m') AS month, count(*) FROM Invoice GROUP BY 1",
    "SELECT year(InvoiceDate), month(InvoiceDate), day(InvoiceDate), dayofweek(InvoiceDate), "
    "quarter(InvoiceDate), date_part('hour', InvoiceDate), date_diff('day', InvoiceDate, "
    "current_date), InvoiceDate::DATE, InvoiceDate + INTERVAL 30 DAY, current_date - "
    "INTERVAL 1 YEAR, age(InvoiceDate), last_day(InvoiceDate), make_date(2024, 1, 31) "
    "FROM Invoice LIMIT 5",
    "SELECT * EXCLUDE (Fax, Phone) FROM Customer",
    "SELECT * REPLACE (upper(Country) AS Country) FROM Customer",
    "SELECT COLUMNS('Billing.*') FROM Invoice",
    "SELECT max(COLUMNS(* EXCLUDE (InvoiceId))) FROM Invoice",
    "SELECT CustomerId, Total FROM Invoice QUALIFY row_number() OVER (PARTITION BY CustomerId "
    "ORDER BY Total DESC) = 1",
    "SELECT arg_max(Name, Milliseconds), arg_min(Name, Milliseconds), max_by(Name, Bytes), "
    "min_by(Name, Bytes) FROM Track",
    "SELECT AlbumId, list(Name ORDER BY TrackId), string_agg(Name, ', ' ORDER BY Name), "
    "array_agg(TrackId), count(*) FROM Track GROUP BY ALL",
    "SELECT Name ILIKE '%love%', regexp_matches(Name, '^[A-Z]'), regexp_extract(Name, "
    "'(\\w+)', 1), regexp_replace(Name, '\\s+', ' ', 'g'), starts_with(Name, 'A'), "
    "contains(Name, 'x'), split_part(Name, ' ', 1), string_split(Name, ' ') FROM Track LIMIT 5",
    "SELECT median(Total), quantile_cont(Total, 0.9), mode(BillingCountry), "
    "approx_count_distinct(CustomerId), bool_or(Total > 20), corr(InvoiceId, Total), "
    "kurtosis(Total), histogram(BillingCountry) FROM Invoice",
    "SELECT list_value(1, 2, 3) AS l, [1, 2, 3][2], list_transform([1, 2], lambda x: x * 2), "
    "list_filter([1, 2, 3], lambda x: x > 1), len([1, 2]), list_sort([3, 1, 2]), "
    "list_aggregate([1, 2], 'sum'), list_distinct([1, 1]), unnest([1, 2]) AS u",
    "SELECT {'a': 1, 'b': 'x'} AS s, struct_pack(k := 1, v := 'x').k, map(['a'], [1])['a'], "
    "row(1, 'x')",
    "SELECT json_extract('{\"a\": 1}', '$.a'), '{\"a\": {\"b\": 2}}'->>'$.a.b', "
    "json_object('k', Name), to_json(ArtistId) FROM Artist LIMIT 2",
    "SELECT * FROM range(5) r(i)",
    "SELECT * FROM generate_series(1, 3)",
    "SELECT i, g.n FROM range(3) t(i), LATERAL generate_series(1, i) g(n)",
    "SELECT a.Title, t.cnt FROM Album a, LATERAL (SELECT count(*) AS cnt FROM Track "
    "WHERE AlbumId = a.AlbumId) t LIMIT 5",
    "SELECT BillingCountry, sum(Total) FROM Invoice GROUP BY ALL ORDER BY ALL",
    "SELECT * FROM Invoice USING SAMPLE 10 ROWS",
    "SELECT * FROM Invoice USING SAMPLE reservoir(5 ROWS) REPEATABLE (7)",
    "SELECT * FROM Track TABLESAMPLE 10%",
    "SELECT * FROM (SELECT BillingCountry, year(InvoiceDate) AS y, Total FROM Invoice) "
    "PIVOT (sum(Total) FOR y IN (2021, 2022))",
    "SELECT if(Total > 10, 'big', 'small'), ifnull(BillingState, '-'), "
    "coalesce(BillingState, BillingCity) FROM Invoice",
    "SELECT printf('%s: %d', Name, ArtistId), format('{}-{}', Name, ArtistId), "
    "lpad(CAST(ArtistId AS VARCHAR), 5, '0'), left(Name, 3), right(Name, 2), reverse(Name), "
    "md5(Name), hash(Name), levenshtein(Name, 'AC/DC') FROM Artist LIMIT 3",
    "SELECT epoch(InvoiceDate), to_timestamp(1700000000), strptime('2024-01-02', '%Y-%m-%d'), "
    "date_add(DATE '2024-01-01', INTERVAL 3 DAY), time_bucket(INTERVAL '1 month', "
    "InvoiceDate) FROM Invoice LIMIT 2",
    "SELECT t.* FROM Track t ASOF JOIN Invoice i ON t.TrackId >= i.InvoiceId LIMIT 3",
    "SELECT current_setting('threads'), version(), current_database(), current_schema()",
    "SELECT table_name, column_name FROM information_schema.columns WHERE table_name = 'Track'",
    "SELECT table_name FROM duckdb_tables() ORDER BY 1",
    "SELECT * FROM pragma_table_info('Track')",
    "SELECT GROUPING(BillingCountry), BillingCountry, sum(Total) FROM Invoice "
    "GROUP BY CUBE (BillingCountry)",
    "SELECT Name, Milliseconds // 1000 AS s, Milliseconds / 60000.0 AS minutes, "
    "Milliseconds % 1000 AS ms FROM Track LIMIT 3",
    "SELECT count(*) FROM Track WHERE Name SIMILAR TO '[A-C].*' OR Name GLOB 'Z*'",
    "SELECT * FROM Invoice ORDER BY Total DESC LIMIT 5 OFFSET 2",
    "SELECT hour(InvoiceDate), minute(InvoiceDate), strftime(InvoiceDate, '%A') FROM Invoice "
    "LIMIT 1",
    "SELECT CustomerId, first(Total ORDER BY InvoiceDate), last(Total ORDER BY InvoiceDate), "
    "array_agg(DISTINCT BillingCountry) FROM Invoice GROUP BY CustomerId",
]

SPARK = COMMON + [
    "SELECT date_trunc('MONTH', InvoiceDate) AS m, sum(Total) FROM Invoice GROUP BY 1 "
    "ORDER BY m",
    "SELECT date_format(InvoiceDate, 'yyyy-MM') AS month, count(*) FROM Invoice GROUP BY 1",
    "SELECT year(InvoiceDate), month(InvoiceDate), dayofmonth(InvoiceDate), "
    "dayofweek(InvoiceDate), quarter(InvoiceDate), hour(InvoiceDate), datediff(current_date(), "
    "InvoiceDate), to_date(InvoiceDate), date_add(InvoiceDate, 30), add_months(InvoiceDate, 1), "
    "months_between(current_date(), InvoiceDate), last_day(InvoiceDate), make_date(2024, 1, 31) "
    "FROM Invoice LIMIT 5",
    "SELECT b, count(*) FROM (SELECT BillingCountry AS b FROM Invoice) GROUP BY ALL",
    "SELECT CustomerId, Total FROM (SELECT CustomerId, Total, row_number() OVER (PARTITION BY "
    "CustomerId ORDER BY Total DESC) AS rn FROM Invoice) WHERE rn = 1",
    "SELECT max_by(Name, Milliseconds), min_by(Name, Milliseconds), count_if(Milliseconds > "
    "300000), percentile_approx(Milliseconds, 0.5), approx_count_distinct(AlbumId) FROM Track",
    "SELECT AlbumId, collect_list(Name), collect_set(GenreId), array_join(collect_list(Name), "
    "', '), array_agg(TrackId) FROM Track GROUP BY AlbumId",
    "SELECT Name RLIKE '^[A-Z]', ilike(Name, '%love%'), regexp_extract(Name, '(\\\\w+)', 1), "
    "regexp_replace(Name, '\\\\s+', ' '), startswith(Name, 'A'), contains(Name, 'x'), "
    "split_part(Name, ' ', 1), split(Name, ' '), instr(Name, 'a'), locate('a', Name), "
    "initcap(Name), lpad(Name, 40, '.'), rpad(Name, 40, '.') FROM Track LIMIT 5",
    "SELECT median(Total), percentile(Total, 0.9), mode(BillingCountry), bool_or(Total > 20), "
    "corr(InvoiceId, Total), kurtosis(Total), skewness(Total), variance(Total) FROM Invoice",
    "SELECT array(1, 2, 3)[1], transform(array(1, 2), x -> x * 2), filter(array(1, 2, 3), "
    "x -> x > 1), size(array(1, 2)), sort_array(array(3, 1, 2)), array_contains(array(1), 1), "
    "aggregate(array(1, 2, 3), 0, (acc, x) -> acc + x), array_distinct(array(1, 1)), "
    "element_at(array(1, 2), 1), exists(array(1, 2), x -> x > 1), forall(array(1), x -> x > 0)",
    "SELECT named_struct('a', 1, 'b', 'x') AS s, struct(1, 'x'), map('a', 1)['a'], "
    "map_keys(map('a', 1)), map_values(map('a', 1))",
    "SELECT get_json_object('{\"a\": 1}', '$.a'), from_json('{\"a\": 1}', 'a INT'), "
    "from_json('{\"a\": \"1/2/2024\"}', 'a DATE', map('dateFormat', 'M/d/yyyy', 'mode', "
    "'PERMISSIVE')), to_json(named_struct('k', Name)), schema_of_json('{\"a\": 1}'), "
    "json_array_length('[1, 2]'), from_csv('1,2', 'a INT, b INT', map('sep', ',')) "
    "FROM Artist LIMIT 2",
    "SELECT from_xml('<p><a>1</a></p>', 'a INT'), schema_of_xml('<p><a>1</a></p>'), "
    "from_xml('<r><a>1</a></r>', 'a INT', map('rowTag', 'r'))",
    "SELECT * FROM range(5)",
    "SELECT explode(array(1, 2)) AS x",
    "SELECT a.Title, e.x FROM Album a LATERAL VIEW explode(array(1, 2)) e AS x LIMIT 4",
    "SELECT * FROM Invoice TABLESAMPLE (10 ROWS)",
    "SELECT * FROM (SELECT BillingCountry, year(InvoiceDate) AS y, Total FROM Invoice) "
    "PIVOT (sum(Total) FOR y IN (2021, 2022))",
    "SELECT if(Total > 10, 'big', 'small'), ifnull(BillingState, '-'), nvl(BillingState, "
    "BillingCity), nvl2(BillingState, 1, 0) FROM Invoice",
    "SELECT format_string('%s: %d', Name, ArtistId), printf('%s', Name), format_number(1234.5, "
    "1), left(Name, 3), right(Name, 2), reverse(Name), md5(Name), sha2(Name, 256), hash(Name), "
    "levenshtein(Name, 'AC/DC'), soundex(Name) FROM Artist LIMIT 3",
    "SELECT unix_timestamp(InvoiceDate), from_unixtime(1700000000), to_timestamp('2024-01-02', "
    "'yyyy-MM-dd'), date_sub(InvoiceDate, 3), timestampadd(DAY, 1, InvoiceDate), "
    "timestampdiff(DAY, InvoiceDate, current_timestamp()), date_part('YEAR', InvoiceDate), "
    "trunc(InvoiceDate, 'MM') FROM Invoice LIMIT 2",
    "SELECT current_database(), current_catalog(), version(), current_user()",
    "SELECT GROUPING(BillingCountry), BillingCountry, sum(Total) FROM Invoice "
    "GROUP BY CUBE (BillingCountry)",
    "SELECT Name, Milliseconds DIV 1000 AS s, Milliseconds / 60000.0 AS minutes, "
    "Milliseconds % 1000 AS ms, try_divide(Milliseconds, 0) FROM Track LIMIT 3",
    "SELECT * FROM Invoice ORDER BY Total DESC LIMIT 5 OFFSET 2",
    "SELECT stack(2, 'a', 1, 'b', 2)",
    "SELECT * FROM VALUES (1, 'a'), (2, 'b') AS v(id, label)",
    "SELECT inline(array(named_struct('a', 1), named_struct('a', 2)))",
    "SELECT posexplode(array('x', 'y'))",
    "SELECT CustomerId, first(Total), last(Total), max(InvoiceDate) FROM Invoice "
    "GROUP BY CustomerId",
    "SELECT Total, CAST(Total AS DECIMAL(12, 3)), CAST(InvoiceId AS STRING), Total::INT, "
    "bround(Total, 1), round(Total), int(Total), double(Total) FROM Invoice LIMIT 2",
    "SELECT sequence(1, 5), slice(array(1, 2, 3), 1, 2), concat_ws('-', 'a', 'b'), "
    "array_position(array(1, 2), 2), flatten(array(array(1), array(2)))",
]

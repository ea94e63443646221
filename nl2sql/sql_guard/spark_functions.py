"""Spark SQL functions a query may call: the engine's catalogue, reviewed (``allowlist.py``).

Read from ``SHOW SYSTEM FUNCTIONS`` and ``DESCRIBE FUNCTION EXTENDED`` (the implementing class)
of Spark 4.3.0 through Spark Connect, then reviewed by hand: every name is admitted (by kind) or
refused with the reason. The raw catalogue is ``scripts/function_catalogues/spark.tsv``;
``scripts/function_catalogue.py spark --remote sc://...`` dumps a server's and lists the names
this review does not cover (a newer Spark's new functions are refused until they are added
here); ``tests/test_function_allowlists.py`` checks every function of the test server against it.

Admitted: pure scalar, aggregate and window functions and the generators (``range``,
``explode``...); the parsers that take an options map only with the options listed in OPTIONS.
Refused: JVM reflection, Java XPath, the Avro and Protobuf functions (their schema, descriptor
and options name files or URLs) and the Python worker logs. Functions of other distributions
(Databricks' ``read_files``, ``secret``, ``ai_query``...) are not in the catalogue, so they are
refused too (and named on the deny list).
"""

from __future__ import annotations

from nl2sql.sql_guard.allowlist import Allowlist, Options, names

ENGINE_VERSION = "4.3.0"

SCALAR = names("""
! != % & * + - / < << <= <=> <> = == > >= >> >>> ^ abs acos acosh add_months aes_decrypt
aes_encrypt aggregate and approx_top_k_estimate array array_append array_compact array_contains
array_distinct array_except array_insert array_intersect array_join array_max array_min
array_position array_prepend array_remove array_repeat array_size array_sort array_union
arrays_overlap arrays_zip ascii asin asinh assert_true atan atan2 atanh base64 between bigint
bin binary bit_count bit_get bit_length bitmap_and_agg bitmap_bit_position bitmap_bucket_number
bitmap_construct_agg bitmap_count bitmap_or_agg boolean bround btrim cardinality case cast cbrt
ceil ceiling char char_length character_length chr coalesce collate collation concat concat_ws
contains conv convert_timezone cos cosh cot counter_diff crc32 csc curdate current_catalog
current_database current_date current_path current_schema current_time current_timestamp
current_timezone current_user date date_add date_diff date_format date_from_unix_date date_part
date_sub date_trunc dateadd datediff datepart day dayname dayofmonth dayofweek dayofyear decimal
decode degrees div double e element_at elt encode endswith equal_null exists exp expm1 extract
factorial filter find_in_set flatten float floor forall format_number format_string from_base32
from_csv from_json from_unixtime from_utc_timestamp from_xml get get_json_object getbit greatest
grouping grouping_id hash hex hll_sketch_estimate hll_union hmac hour hypot if ifnull ilike in
initcap input_file_block_length input_file_block_start input_file_name instr int is_valid_utf8
is_valid_variant is_variant_null isnan isnotnull isnull jaro_winkler_similarity
json_array_length json_object_keys kll_sketch_get_n_bigint kll_sketch_get_n_double
kll_sketch_get_n_float kll_sketch_get_quantile_bigint kll_sketch_get_quantile_double
kll_sketch_get_quantile_float kll_sketch_get_rank_bigint kll_sketch_get_rank_double
kll_sketch_get_rank_float kll_sketch_merge_bigint kll_sketch_merge_double kll_sketch_merge_float
kll_sketch_to_string_bigint kll_sketch_to_string_double kll_sketch_to_string_float last_day
lcase least left len length levenshtein like ln localtime localtimestamp locate log log10 log1p
log2 lower lpad ltrim luhn_check make_date make_dt_interval make_interval make_time
make_timestamp make_timestamp_ltz make_timestamp_ntz make_valid_utf8 make_ym_interval map
map_concat map_contains_key map_entries map_filter map_from_arrays map_from_entries map_keys
map_values map_zip_with mask md5 minute mod monotonically_increasing_id month monthname
months_between named_struct nanvl negative next_day not now nullif nullifzero nvl nvl2
octet_length or overlay parse_json parse_url pi pmod position positive pow power printf quarter
quote radians raise_error rand randn random randstr reduce regexp regexp_count regexp_extract
regexp_extract_all regexp_instr regexp_like regexp_replace regexp_substr repeat replace reverse
right rint rlike round rpad rtrim schema_of_csv schema_of_json schema_of_variant
schema_of_variant_agg schema_of_xml sec second sentences sequence session_user session_window
sha sha1 sha2 shiftleft shiftright shiftrightunsigned shuffle sign signum sin sinh size slice
smallint sort_array soundex space spark_partition_id split split_part sqrt st_asbinary
st_geogfromwkb st_geomfromwkb st_setsrid st_srid startswith str_to_map string struct substr
substring substring_index tan tanh theta_difference theta_intersection theta_sketch_estimate
theta_union time time_bucket time_diff time_from_micros time_from_millis time_from_seconds
time_to_micros time_to_millis time_to_seconds time_trunc timestamp timestamp_micros
timestamp_millis timestamp_nanos timestamp_seconds tinyint to_base32 to_binary to_char to_csv
to_date to_json to_number to_time to_timestamp to_timestamp_ltz to_timestamp_ntz
to_unix_timestamp to_utc_timestamp to_varchar to_variant_object to_xml transform transform_keys
transform_values translate trim trunc try_add try_aes_decrypt try_divide try_element_at
try_make_interval try_make_timestamp try_make_timestamp_ltz try_make_timestamp_ntz try_mod
try_multiply try_parse_json try_parse_url try_subtract try_to_binary try_to_date try_to_number
try_to_time try_to_timestamp try_url_decode try_validate_utf8 try_variant_array_append
try_variant_get try_variant_insert try_variant_set tuple_difference_double
tuple_difference_integer tuple_difference_theta_double tuple_difference_theta_integer
tuple_intersection_double tuple_intersection_integer tuple_intersection_theta_double
tuple_intersection_theta_integer tuple_sketch_estimate_double tuple_sketch_estimate_integer
tuple_sketch_summary_double tuple_sketch_summary_integer tuple_sketch_theta_double
tuple_sketch_theta_integer tuple_union_double tuple_union_integer tuple_union_theta_double
tuple_union_theta_integer typeof ucase unbase64 unhex uniform unix_date unix_micros unix_millis
unix_nanos unix_seconds unix_timestamp upper url_decode url_encode user uuid validate_utf8
variant_array_append variant_delete variant_get variant_insert variant_set variant_strip_nulls
vector_avg vector_cosine_similarity vector_inner_product vector_l2_distance vector_norm
vector_normalize vector_sum version weekday weekofyear when width_bucket window window_time
xxhash64 year zeroifnull zip_with | || ~
""")

AGGREGATE = names("""
any any_value approx_count_distinct approx_percentile approx_top_k approx_top_k_accumulate
approx_top_k_combine array_agg avg bit_and bit_or bit_xor bool_and bool_or collect_list
collect_set collect_union corr count count_if count_min_sketch covar_pop covar_samp every first
first_value histogram_numeric hll_sketch_agg hll_union_agg kll_merge_agg_bigint
kll_merge_agg_double kll_merge_agg_float kll_sketch_agg_bigint kll_sketch_agg_double
kll_sketch_agg_float kurtosis last last_value listagg max max_by mean measure median min min_by
mode percentile percentile_approx percentile_cont percentile_disc regr_avgx regr_avgy regr_count
regr_intercept regr_r2 regr_slope regr_sxx regr_sxy regr_syy skewness some std stddev stddev_pop
stddev_samp string_agg sum theta_intersection_agg theta_sketch_agg theta_union_agg try_avg
try_sum tuple_intersection_agg_double tuple_intersection_agg_integer tuple_sketch_agg_double
tuple_sketch_agg_integer tuple_union_agg_double tuple_union_agg_integer var_pop var_samp
variance
""")

WINDOW = names("""
cume_dist dense_rank lag lead nth_value ntile percent_rank rank row_number
""")

TABLE = names("""
collations explode explode_outer inline inline_outer json_tuple posexplode posexplode_outer
range sql_keywords stack variant_explode variant_explode_outer
""")

REFUSED: dict[str, tuple[str, frozenset[str]]] = {

    "jvm": ("it calls a Java method named in its arguments on the server", names("""
java_method reflect try_reflect
""")),

    "xpath": ("it evaluates Java XPath over its argument", names("""
xpath xpath_boolean xpath_double xpath_float xpath_int xpath_long xpath_number xpath_short
xpath_string
""")),

    "schema_files": ("its schema, descriptor or options can name files or URLs the server "
                     "reads", names("""
from_avro from_protobuf schema_of_avro to_avro to_protobuf
""")),

    "logs": ("it reads the server's Python worker logs", names("""
python_worker_logs
""")),

}
#: Words of Spark's grammar that take parentheses and that the catalogue lists as no function:
#: clauses (``IN (``, ``OVER (``, ``WITHIN GROUP (``, ``TABLESAMPLE (``), types with
#: parameters (``VARCHAR(10)``), special forms (``TRY_CAST(``, ``TIMESTAMPADD(``).
SYNTAX = names("""
all as at by cluster cube current distinct distribute else escape except following for from
geography geometry group groups having ignore interval intersect is join lateral limit minus
nulls numeric offset on order over partition pivot preceding recursive repeatable respect rollup
rows select sets sort tablesample then timediff timestampadd timestampdiff to try_cast union
unnest unpivot using values varchar where with within zone
""")

# Options that only shape how a value is parsed or written (Spark's JSONOptions, CSVOptions,
# XmlOptions); none names a file, URL or schema to load (rowValidationXSDPath is the one that
# does: Spark fetched the XSD and its external entities).
_DATES = ("dateformat timestampformat timestampntzformat enabledatetimeparsingfallback locale "
          "timezone")
_JSON = names(f"""
{_DATES} mode columnnameofcorruptrecord samplingratio primitivesasstring prefersdecimal
allowcomments allowunquotedfieldnames allowsinglequotes allownumericleadingzeros
allownonnumericnumbers allowbackslashescapinganycharacter allowunquotedcontrolchars
dropfieldifallnull multiline linesep encoding inferTimestamp pretty ignorenullfields
writenonasciicharacterascodepoint
""")
_CSV = names(f"""
{_DATES} mode columnnameofcorruptrecord samplingratio sep delimiter encoding charset quote escape
chartoescapequoteescaping comment header enforceschema inferschema preferdate
ignoreleadingwhitespace ignoretrailingwhitespace nullvalue nanvalue positiveinf negativeinf
maxcolumns maxcharspercolumn multiline linesep emptyvalue unescapedquotehandling quoteall
escapequotes
""")
_XML = names(f"""
{_DATES} mode columnnameofcorruptrecord samplingratio rowtag roottag excludeattribute
treatemptyvaluesasnulls attributeprefix valuetag encoding charset ignoresurroundingspaces
ignorenamespace nullvalue wildcardcolname arrayelementname declaration inferschema
prefersdecimal validatename indent
""")

ALLOWLIST = Allowlist(
    engine=f"Spark {ENGINE_VERSION}",
    admitted=SCALAR | AGGREGATE | WINDOW | TABLE,
    refused={name: why for why, group in REFUSED.values() for name in group},
    syntax=SYNTAX,
    options={
        "from_json": Options(2, _JSON), "schema_of_json": Options(1, _JSON),
        "to_json": Options(1, _JSON), "from_csv": Options(2, _CSV),
        "schema_of_csv": Options(1, _CSV), "to_csv": Options(1, _CSV),
        "from_xml": Options(2, _XML), "schema_of_xml": Options(1, _XML),
        "to_xml": Options(1, _XML),
    },
)

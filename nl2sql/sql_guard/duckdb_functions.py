"""DuckDB functions a query may call: the engine's catalogue, reviewed (``allowlist.py``).

Read from ``duckdb_functions()`` of DuckDB 2.0.1 with no extension loaded (as nl2sql opens it),
then reviewed by hand: every name is admitted (by kind) or refused with the reason. The raw
catalogue is ``scripts/function_catalogues/duckdb.tsv``; ``scripts/function_catalogue.py duckdb``
dumps the installed version's and lists the names this review does not cover (a newer DuckDB's
new functions are refused until they are added here); ``tests/test_function_allowlists.py``
checks every function of the running engine against it. Operators spelled as words (``IS
DISTINCT FROM``) are not callable by name and are left out.

Admitted: pure scalar, aggregate and window functions, and the table functions that generate
rows (``range``, ``unnest``, ``json_each``...) or read the catalogue (``duckdb_tables()``...).
Refused: everything that reads files or the host process, runs SQL held in a string, changes
the engine's state, or reads secrets, settings, logs and engine internals.
"""

from __future__ import annotations

from nl2sql.sql_guard.allowlist import Allowlist, names

ENGINE_VERSION = "2.0.1"

SCALAR = names("""
!= !__postfix !~~ !~~* % & && * ** + - ->> / // < <-> << <= <=> <@ = > >= >> @ @> ^ ^@ abs acos
acosh add age aggregate ago alias apply array_aggr array_aggregate array_append array_apply
array_cat array_concat array_contains array_cosine_distance array_cosine_similarity
array_cross_product array_distance array_distinct array_dot_product array_extract array_filter
array_grade_up array_has array_has_all array_has_any array_indexof array_inner_product
array_intersect array_length array_negative_dot_product array_negative_inner_product
array_pop_back array_pop_front array_position array_prepend array_push_back array_push_front
array_reduce array_resize array_reverse array_reverse_sort array_select array_slice array_sort
array_to_json array_to_string array_to_string_comma_default array_transform array_unique
array_value array_where array_zip ascii asin asinh assert_true atan atan2 atanh bar base64 bin
binom bit_count bit_length bit_position bitstring bitstring_byte_comparable can_cast_implicitly
cardinality cast_to_type cbrt ceil ceiling century char_length character_length chr
col_description collate_aa collate_af collate_am collate_ar collate_ar_sa collate_as collate_az
collate_bal collate_be collate_bg collate_blo collate_bn collate_bo collate_br collate_bs
collate_ca collate_ceb collate_chr collate_cs collate_cu collate_cy collate_da collate_de
collate_de_at collate_dsb collate_dz collate_ee collate_el collate_en collate_en_us collate_eo
collate_es collate_et collate_fa collate_fa_af collate_ff collate_fi collate_fil collate_fo
collate_fr collate_fr_ca collate_fy collate_ga collate_gl collate_gu collate_ha collate_haw
collate_he collate_he_il collate_hi collate_hr collate_hsb collate_hu collate_hy collate_id
collate_id_id collate_ig collate_is collate_it collate_ja collate_ka collate_kk collate_kl
collate_km collate_kn collate_ko collate_kok collate_ku collate_ky collate_lb collate_lij
collate_lkt collate_ln collate_lo collate_lt collate_lv collate_mk collate_ml collate_mn
collate_mr collate_ms collate_mt collate_my collate_nb collate_nb_no collate_ne collate_nl
collate_nn collate_no collate_noaccent collate_nso collate_om collate_or collate_pa
collate_pa_in collate_pl collate_ps collate_pt collate_ro collate_ru collate_sa collate_se
collate_sgs collate_si collate_sk collate_sl collate_smn collate_sq collate_sr collate_sr_ba
collate_sr_me collate_sr_rs collate_ssy collate_st collate_sv collate_sw collate_ta collate_te
collate_th collate_tk collate_tn collate_to collate_tr collate_ug collate_uk collate_ur
collate_uz collate_vi collate_vo collate_wae collate_wo collate_xh collate_yi collate_yo
collate_zh collate_zh_cn collate_zh_hk collate_zh_mo collate_zh_sg collate_zh_tw collate_zu
combine concat concat_ws constant_or_null contains cos cosh cot create_sort_key current_catalog
current_connection_id current_database current_date current_localtime current_localtimestamp
current_query current_query_id current_role current_schema current_schemas current_setting
current_transaction_id current_user currval damerau_levenshtein date_add date_diff date_part
date_sub date_trunc datediff datepart datesub datetrunc day dayname dayofmonth dayofweek
dayofyear days_in_month decade decimal_division decode degrees divide editdist3 element_at
encode ends_with enum_code enum_first enum_last enum_range enum_range_boundary epoch epoch_ms
epoch_ns epoch_us equi_width_bins era error even exp factorial fdiv filter finalize flatten
floor fmod format format_bytes format_pg_type format_type formatreadabledecimalsize
formatreadablesize from_base64 from_binary from_hex from_json from_json_strict gamma gcd
gen_random_uuid generate_series generate_subscripts geomean geometric_mean get_bit
get_current_time get_current_timestamp get_type grade_up greatest
greatest_common_divisor hamming has_any_column_privilege has_column_privilege
has_database_privilege has_foreign_data_wrapper_privilege has_function_privilege
has_language_privilege has_schema_privilege has_sequence_privilege has_server_privilege
has_table_privilege has_tablespace_privilege hash hex hive_partition_component hour
icu_collate_aa icu_collate_af icu_collate_am icu_collate_ar icu_collate_ar_sa icu_collate_as
icu_collate_az icu_collate_bal icu_collate_be icu_collate_bg icu_collate_blo icu_collate_bn
icu_collate_bo icu_collate_br icu_collate_bs icu_collate_ca icu_collate_ceb icu_collate_chr
icu_collate_cs icu_collate_cu icu_collate_cy icu_collate_da icu_collate_de icu_collate_de_at
icu_collate_dsb icu_collate_dz icu_collate_ee icu_collate_el icu_collate_en icu_collate_en_us
icu_collate_eo icu_collate_es icu_collate_et icu_collate_fa icu_collate_fa_af icu_collate_ff
icu_collate_fi icu_collate_fil icu_collate_fo icu_collate_fr icu_collate_fr_ca icu_collate_fy
icu_collate_ga icu_collate_gl icu_collate_gu icu_collate_ha icu_collate_haw icu_collate_he
icu_collate_he_il icu_collate_hi icu_collate_hr icu_collate_hsb icu_collate_hu icu_collate_hy
icu_collate_id icu_collate_id_id icu_collate_ig icu_collate_is icu_collate_it icu_collate_ja
icu_collate_ka icu_collate_kk icu_collate_kl icu_collate_km icu_collate_kn icu_collate_ko
icu_collate_kok icu_collate_ku icu_collate_ky icu_collate_lb icu_collate_lij icu_collate_lkt
icu_collate_ln icu_collate_lo icu_collate_lt icu_collate_lv icu_collate_mk icu_collate_ml
icu_collate_mn icu_collate_mr icu_collate_ms icu_collate_mt icu_collate_my icu_collate_nb
icu_collate_nb_no icu_collate_ne icu_collate_nl icu_collate_nn icu_collate_no
icu_collate_noaccent icu_collate_nso icu_collate_om icu_collate_or icu_collate_pa
icu_collate_pa_in icu_collate_pl icu_collate_ps icu_collate_pt icu_collate_ro icu_collate_ru
icu_collate_sa icu_collate_se icu_collate_sgs icu_collate_si icu_collate_sk icu_collate_sl
icu_collate_smn icu_collate_sq icu_collate_sr icu_collate_sr_ba icu_collate_sr_me
icu_collate_sr_rs icu_collate_ssy icu_collate_st icu_collate_sv icu_collate_sw icu_collate_ta
icu_collate_te icu_collate_th icu_collate_tk icu_collate_tn icu_collate_to icu_collate_tr
icu_collate_ug icu_collate_uk icu_collate_ur icu_collate_uz icu_collate_vi icu_collate_vo
icu_collate_wae icu_collate_wo icu_collate_xh icu_collate_yi icu_collate_yo icu_collate_zh
icu_collate_zh_cn icu_collate_zh_hk icu_collate_zh_mo icu_collate_zh_sg icu_collate_zh_tw
icu_collate_zu icu_sort_key if ilike_escape in_search_path inet_client_addr inet_client_port
inet_server_addr inet_server_port instr invoke is_histogram_other_bin isfinite isinf isnan
isodow isoyear jaccard jaro_similarity jaro_winkler_similarity json json_array json_array_length
json_contains json_copy_strftime_if_date json_copy_strftime_if_timestamp json_deep_merge
json_exists json_extract json_extract_path json_extract_path_text json_extract_string
json_group_array json_group_object json_group_structure json_insert json_keys json_merge_patch
json_merge_patch_diff json_normalize json_object json_pretty json_quote json_remove json_replace
json_set json_strip_nulls json_structure json_transform json_transform_strict json_type
json_valid json_value julian last_day lcase lcm least least_common_multiple left left_grapheme
len length length_grapheme levenshtein lgamma like_escape list_aggr list_aggregate
list_any_value list_append list_apply list_approx_count_distinct list_avg list_bit_and
list_bit_or list_bit_xor list_bool_and list_bool_or list_cat list_concat list_contains
list_cosine_distance list_cosine_similarity list_count list_distance list_distinct
list_dot_product list_element list_entropy list_extract list_filter list_first list_grade_up
list_has list_has_all list_has_any list_histogram list_indexof list_inner_product list_intersect
list_kurtosis list_kurtosis_pop list_last list_mad list_max list_median list_min list_mode
list_negative_dot_product list_negative_inner_product list_pack list_position list_prepend
list_product list_reduce list_resize list_reverse list_reverse_sort list_select list_sem
list_skewness list_slice list_sort list_stddev_pop list_stddev_samp list_string_agg list_sum
list_transform list_unique list_value list_var_pop list_var_samp list_where list_zip ln log
log10 log2 lower lpad ltrim make_date make_time make_timestamp make_timestamp_ms
make_timestamp_ns make_timestamptz make_type map map_concat map_contains map_contains_entry
map_contains_value map_entries map_extract map_extract_value map_from_entries map_keys
map_to_pg_oid map_type_id_to_pg_oid map_values md5 md5_number md5_number_lower md5_number_upper
microsecond millennium millisecond minute mismatches mod month monthname multiply nanosecond
nextafter nfc_normalize normalized_interval not_ilike_escape not_like_escape now nullif
obj_description octet_length ord overlay parse_dirname parse_dirpath parse_duckdb_log_message
parse_filename parse_formatted_bytes parse_path path_join pg_collation_is_visible
pg_conf_load_time pg_conversion_is_visible pg_function_is_visible pg_get_constraintdef
pg_get_expr pg_get_viewdef pg_has_role pg_is_other_temp_schema pg_my_temp_schema
pg_opclass_is_visible pg_operator_is_visible pg_opfamily_is_visible pg_postmaster_start_time
pg_size_pretty pg_table_is_visible pg_ts_config_is_visible pg_ts_dict_is_visible
pg_ts_parser_is_visible pg_ts_template_is_visible pg_type_is_visible pg_typeof pi position pow
power prefix printf quarter radians random range reduce regexp_escape regexp_extract
regexp_extract_all regexp_full_match regexp_matches regexp_replace regexp_split_to_array
regexp_split_to_table remap_struct repeat replace replace_type reverse right right_grapheme
round round_even roundbankers row row_to_json rpad rtrim second session_user set_bit sha1 sha256
shobj_description sign signbit sin sinh split split_part sqrt st_asbinary st_asgeojson st_astext
st_aswkb st_aswkt st_crs st_geomfromgeojson st_geomfromwkb st_intersects_extent st_setcrs
starts_with stats str_split str_split_regex strftime string_split string_split_regex
string_to_array strip_accents strlen strpos strptime struct_concat struct_contains
struct_extract struct_extract_at struct_has struct_indexof struct_insert struct_keys struct_pack
struct_position struct_update struct_values substr substring substring_grapheme subtract suffix
switch tan tanh time_bucket timetz_byte_comparable timezone timezone_hour timezone_minute
to_base to_base64 to_binary to_centuries to_days to_decades to_hex to_hours to_json
to_microseconds to_millennia to_milliseconds to_minutes to_months to_quarters to_seconds
to_timestamp to_weeks to_years today transaction_timestamp translate trim trunc try_strptime
txid_current typeof ucase unbin unhex unicode union_extract union_tag union_value unpivot_list
upper url_decode url_encode user uuid uuid_extract_timestamp uuid_extract_version uuidv4 uuidv7
variant_array_length variant_bytes_to_variant variant_comparator variant_contains variant_exists
variant_extract variant_extract_string variant_group_array variant_keys variant_normalize
variant_to_parquet_variant variant_type variant_typeof vector_type version vertex_extract wavg
week weekday weekofyear weighted_avg xor year yearweek | || ~ ~~ ~~* ~~~
""")

AGGREGATE = names("""
any_value approx_count_distinct approx_quantile approx_top_k arbitrary arg_max arg_max_null
arg_max_nulls_last arg_min arg_min_null arg_min_nulls_last argmax argmin array_agg avg bit_and
bit_or bit_xor bitstring_agg bool_and bool_or combine_aggr corr count count_if count_star
countif covar_pop covar_samp decimal_average entropy favg first fsum group_concat histogram
histogram_exact kahan_sum kurtosis kurtosis_pop last list listagg lttb mad max max_by mean
median min min_by mode product quantile quantile_cont quantile_disc regr_avgx regr_avgy
regr_count regr_intercept regr_r2 regr_slope regr_sxx regr_sxy regr_syy reservoir_quantile sem
skewness stddev stddev_pop stddev_samp string_agg sum sum_no_overflow sumkahan var_pop var_samp
variance variant_group_object
""")

WINDOW = names("""
cume_dist dense_rank fill first_value lag last_value lead nth_value ntile percent_rank rank
rank_dense row_number
""")

TABLE = names("""
duckdb_columns duckdb_constraints duckdb_coordinate_systems duckdb_databases duckdb_dependencies
duckdb_functions duckdb_indexes duckdb_keywords duckdb_schemas duckdb_sequences duckdb_tables
duckdb_triggers duckdb_types duckdb_views icu_calendar_names json_each
json_tree pg_timezone_names pragma_collations pragma_show pragma_table_info pragma_version
repeat_row unnest
""")

REFUSED: dict[str, tuple[str, frozenset[str]]] = {

    "named_table": ("it queries a table or view named by a string (query_table)", names("""
histogram_values
""")),
    "sql_text": ("it runs or builds SQL text the guard never parsed", names("""
json_deserialize_sql json_execute_serialized_sql json_serialize_plan json_serialize_sql query
query_table
""")),

    "file": ("it reads files, directories or file metadata: the configured files are views "
             "already", names("""
glob parquet_bloom_probe parquet_file_metadata parquet_full_metadata parquet_kv_metadata
parquet_metadata parquet_page_index parquet_scan parquet_schema read_blob read_csv read_csv_auto
read_duckdb read_json read_json_auto read_json_objects read_json_objects_auto read_ndjson
read_ndjson_auto read_ndjson_objects read_parquet read_single_csv_file read_single_json_file
read_single_parquet_file read_text sniff_csv
""")),

    "process": ("it reads objects of nl2sql's own process: Arrow or pandas data, Python "
                "functions", names("""
arrow_scan arrow_scan_dumb pandas_scan python_arrow_scan python_map_function
""")),

    "state": ("it changes the engine's state: logs, profiling, checkpoints, the grammar, "
              "external resources, sequences, the random seed", names("""
add_grammar_extension checkpoint create_external_resource deregister_external_resource
destroy_external_resource disable_logging disable_profiling enable_logging enable_profiling
force_checkpoint nextval register_external_resource register_external_resource_type
remove_grammar_extension setseed setval truncate_duckdb_logs write_log
""")),

    "secret": ("it reads secrets, settings, variables, logs or prepared statements, which may "
               "hold credentials or other callers' SQL", names("""
duckdb_live_query_metrics duckdb_log_contexts duckdb_logs duckdb_logs_parsed
duckdb_prepared_statements duckdb_profiling_settings duckdb_secret_type_parameters
duckdb_secret_types duckdb_secrets duckdb_settings duckdb_variables getvariable which_secret
""")),

    "engine": ("it reports on the running engine, not on the data: memory, caches, files, "
               "connections, extensions", names("""
duckdb_approx_database_count duckdb_available_metrics duckdb_connection_count duckdb_dialects
duckdb_eviction_queues duckdb_extension_repositories duckdb_extensions
duckdb_external_file_cache duckdb_external_resource_types duckdb_external_resources
duckdb_grammar_extensions duckdb_memory duckdb_optimizers duckdb_temporary_files
get_block_size pragma_database_size pragma_metadata_info pragma_platform pragma_storage_info
pragma_user_agent
""")),

    "sleep": ("it sleeps", names("""
pg_sleep sleep_ms
""")),

    "internal": ("it is one of the engine's internal or test helpers", names("""
duckdb_table_sample index_key seq_scan summary test_all_types test_vector_types
to_aggregate_state
""")),

    "pragma": ("it is a PRAGMA, not a function a query calls", names("""
add_parquet_key collations copy_database database_list database_size
disable_checkpoint_on_shutdown disable_object_cache disable_optimizer disable_print_progress_bar
disable_profile disable_progress_bar disable_verification disable_verify_parallelism
enable_checkpoint_on_shutdown enable_object_cache enable_optimizer enable_print_progress_bar
enable_profile enable_progress_bar enable_verification extension_versions functions
import_database metadata_info platform show show_databases show_tables show_tables_expanded
storage_info table_info user_agent verify_parallelism
""")),

    "internal_helpers": ("it is one of the engine's internal or test helpers", names("""
__between __cast __internal_barrier __internal_compress_geometry_point
__internal_compress_integral_ubigint __internal_compress_integral_uinteger
__internal_compress_integral_usmallint __internal_compress_integral_utinyint
__internal_compress_string_hugeint __internal_compress_string_ubigint
__internal_compress_string_uhugeint __internal_compress_string_uinteger
__internal_compress_string_usmallint __internal_compress_string_utinyint
__internal_compressed_materialization_cast __internal_decompress_geometry_point
__internal_decompress_integral_bigint __internal_decompress_integral_hugeint
__internal_decompress_integral_integer __internal_decompress_integral_smallint
__internal_decompress_integral_ubigint __internal_decompress_integral_uhugeint
__internal_decompress_integral_uinteger __internal_decompress_integral_usmallint
__internal_decompress_string __internal_json_copy_to_geojson __internal_json_copy_to_json
__internal_tablefilter_bloom_filter __internal_tablefilter_dynamic
__internal_tablefilter_optional __internal_tablefilter_prefix_range
__internal_tablefilter_selectivity_optional
""")),

}
#: Words of DuckDB's grammar that take parentheses and that the catalogue lists as no function:
#: clauses (``IN (``, ``OVER (``, ``FILTER (``, ``WITHIN GROUP (``), star modifiers
#: (``COLUMNS(``, ``EXCLUDE (``, ``UNPACK(``), types with parameters (``DECIMAL(10, 2)``,
#: ``STRUCT(a INT)``), sample methods (``reservoir(``), and the calls DuckDB's parser turns
#: into catalogue functions itself (``CAST(``, ``EXTRACT(``, ``COALESCE(``, ``IFNULL(``,
#: ``DATE(``, ``TRY(``, ``GROUPING(``, ``percentile_cont(...) WITHIN GROUP``). Found by
#: calling each keyword and each function name of sqlglot's dialects on the engine.
SYNTAX = names("""
all and any anti array as asof at bernoulli between bit by case cast char character coalesce
columns cube current date dec decimal distinct double else enum escape except exclude exists
extract float following for from full group grouping grouping_id groups having ifnull ignore
ilike in inner interval intersect is join lambda lateral like limit materialized natural not
nulls numeric offset on or order outer over partition percentile_cont percentile_disc pivot
positional preceding qualify recursive rename repeatable reservoir respect rollup rows sample
select semi sets similar some struct system tablesample then time timestamp to try try_cast
union unpack unpivot using values varchar varying when where window with within zone
""")

ALLOWLIST = Allowlist(
    engine=f"DuckDB {ENGINE_VERSION}",
    admitted=SCALAR | AGGREGATE | WINDOW | TABLE,
    refused={name: why for why, group in REFUSED.values() for name in group},
    syntax=SYNTAX,
    # list_aggregate(l, 'sum') calls the aggregate its string names.
    named_functions={"aggregate": 1, "array_aggr": 1, "array_aggregate": 1, "list_aggr": 1,
                     "list_aggregate": 1},
    # histogram(x) is an aggregate; FROM histogram(t, col) a macro over histogram_values
    table_refused={"histogram": "it queries a table or view named by a string (query_table)"},
)

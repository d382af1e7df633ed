-- The chunk gaps (ITL) of a result's per-request samples, apart from its other columns: 127
-- gaps per request against 3 latencies, so nearly all of a samples blob, and most readers
-- want none of them (the compare page, the validation report, the capacity analysis and the
-- SLO recomputation read TTFT, TPOT and E2E latency). Kept in `data`, they were read from the
-- database, copied and inflated on every such read. Rows written from here on
-- (`encoding` = 'bts2-gzip') keep the gaps here, NULL when the tool reported none; older rows
-- ('bts1-gzip') keep everything in `data` and NULL here. Layouts in
-- server/src/storage/samples_codec.rs.
-- Keep in step with migrations/sqlite/0021_samples_itl_apart.sql.
ALTER TABLE result_samples ADD COLUMN itl_data BYTEA;

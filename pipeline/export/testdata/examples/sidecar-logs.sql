-- Flink SQL script of the etld pipeline sidecar-logs (configs/examples/sidecar-logs.yaml), written by etld export flink.
-- Run it with Flink 2.x: sql-client.sh -f FILE (docs/flink-export.md names the jars).
--
-- Differences: 2, where Flink will not do what etld does:
--   sources[0].follow (source app_log, line 17): Flink's filesystem source watches the path for new files (source.monitor-interval) but never reads lines appended to a file it has read, nor follows a rotation: as tail -F, etld does both
--   sinks[0].path (sink requests_out, line 42): Flink's filesystem sink writes a directory out/app-requests.json of part files (part-<uuid>-<n>), committed at checkpoints and at the end of a bounded job, instead of the one file

SET 'execution.runtime-mode' = 'streaming';
SET 'table.local-time-zone' = 'UTC';
SET 'execution.checkpointing.interval' = '10 s';
SET 'table.exec.mini-batch.enabled' = 'true';
SET 'table.exec.mini-batch.allow-latency' = '50 ms';
SET 'table.exec.mini-batch.size' = '1024';

CREATE TABLE `app_log` (
  `line` STRING
) WITH (
  'connector' = 'filesystem',
  'path' = 'configs/examples/data/app.log',
  'format' = 'raw',
  'source.monitor-interval' = '200 ms'
);

CREATE TEMPORARY VIEW `requests` AS
SELECT SPLIT_INDEX(line, ' ', 0) AS ts, SPLIT_INDEX(line, ' ', 1) AS level, CAST(REGEXP_EXTRACT(line, 'user=([0-9]+)', 1) AS BIGINT) AS user_id, REGEXP_EXTRACT(line, 'path=([^ ]+)', 1) AS path, CAST(REGEXP_EXTRACT(line, 'status=([0-9]+)', 1) AS INT) AS status, CAST(REGEXP_EXTRACT(line, 'ms=([0-9]+)', 1) AS INT) AS ms, JSON_VALUE(REGEXP_EXTRACT(line, 'ctx=(\{.*\})', 1), '$.region') AS region FROM app_log WHERE line LIKE '%status=%';

CREATE TABLE `requests_out` (
  `ts` STRING,
  `level` STRING,
  `user_id` BIGINT,
  `path` STRING,
  `status` INT,
  `ms` INT,
  `region` STRING
) WITH (
  'connector' = 'filesystem',
  'path' = 'out/app-requests.json',
  'format' = 'json'
);

EXECUTE STATEMENT SET
BEGIN
INSERT INTO `requests_out` SELECT * FROM `requests`;
END;

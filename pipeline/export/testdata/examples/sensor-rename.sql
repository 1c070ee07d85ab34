-- Flink SQL script of the etld pipeline sensor-rename (configs/examples/sensor-rename.yaml), written by etld export flink.
-- Run it with Flink 2.x: sql-client.sh -f FILE (docs/flink-export.md names the jars).
--
-- Differences: 2, where Flink will not do what etld does:
--   sinks[0].path (sink out, line 26): Flink's filesystem sink writes a directory out/sensor-renamed.csv of part files (part-<uuid>-<n>), committed at checkpoints and at the end of a bounded job, instead of the one file
--   sinks[0].format.header (sink out, line 27): Flink's csv format writes no header line

SET 'execution.runtime-mode' = 'streaming';
SET 'table.local-time-zone' = 'UTC';
SET 'execution.checkpointing.interval' = '10 s';
SET 'table.exec.mini-batch.enabled' = 'true';
SET 'table.exec.mini-batch.allow-latency' = '50 ms';
SET 'table.exec.mini-batch.size' = '1024';

CREATE TABLE `sensor` (
  `id` STRING,
  `timestamp` BIGINT,
  `temperature` DOUBLE
) WITH (
  'connector' = 'filesystem',
  'path' = 'configs/examples/data/sensor.csv',
  'format' = 'csv'
);

CREATE TEMPORARY VIEW `renamed` AS
SELECT `timestamp` AS ts, id AS sensor_id, temperature AS temp_c FROM sensor;

CREATE TABLE `out` (
  `ts` BIGINT,
  `sensor_id` STRING,
  `temp_c` DOUBLE
) WITH (
  'connector' = 'filesystem',
  'path' = 'out/sensor-renamed.csv',
  'format' = 'csv'
);

EXECUTE STATEMENT SET
BEGIN
INSERT INTO `out` SELECT * FROM `renamed`;
END;

-- Flink SQL script of the etld pipeline statement-set (configs/examples/statement-set.yaml), written by etld export flink.
-- Run it with Flink 2.x: sql-client.sh -f FILE (docs/flink-export.md names the jars).
--
-- Differences: 2, where Flink will not do what etld does:
--   sinks[0].path (sink hot_sensors, line 30): Flink's filesystem sink writes a directory out/hot-sensors.csv of part files (part-<uuid>-<n>), committed at checkpoints and at the end of a bounded job, instead of the one file
--   sinks[1].path (sink numbers_out, line 34): Flink's filesystem sink writes a directory out/numbers.json of part files (part-<uuid>-<n>), committed at checkpoints and at the end of a bounded job, instead of the one file

SET 'execution.runtime-mode' = 'streaming';
SET 'table.local-time-zone' = 'UTC';
SET 'execution.checkpointing.interval' = '10 s';
SET 'table.exec.mini-batch.enabled' = 'true';
SET 'table.exec.mini-batch.allow-latency' = '50 ms';
SET 'table.exec.mini-batch.size' = '1024';

CREATE TABLE `sensor` (
  `id` STRING,
  `ts` BIGINT,
  `temperature` DOUBLE
) WITH (
  'connector' = 'filesystem',
  'path' = 'configs/examples/data/sensor.csv',
  'format' = 'csv'
);

CREATE TABLE `numbers` (
  `n` BIGINT
) WITH (
  'connector' = 'datagen',
  'rows-per-second' = '2147483647',
  'fields.n.kind' = 'sequence',
  'fields.n.start' = '1',
  'fields.n.end' = '5'
);

CREATE TEMPORARY VIEW `hot` AS
SELECT id, temperature FROM sensor WHERE temperature > 30;

CREATE TABLE `hot_sensors` (
  `id` STRING,
  `temperature` DOUBLE
) WITH (
  'connector' = 'filesystem',
  'path' = 'out/hot-sensors.csv',
  'format' = 'csv'
);

CREATE TABLE `numbers_out` (
  `n` BIGINT
) WITH (
  'connector' = 'filesystem',
  'path' = 'out/numbers.json',
  'format' = 'json'
);

EXECUTE STATEMENT SET
BEGIN
INSERT INTO `hot_sensors` SELECT * FROM `hot`;
INSERT INTO `numbers_out` SELECT * FROM `numbers`;
END;

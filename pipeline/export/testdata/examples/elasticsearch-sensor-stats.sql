-- Flink SQL script of the etld pipeline elasticsearch-sensor-stats (configs/examples/elasticsearch-sensor-stats.yaml), written by etld export flink.
-- Run it with Flink 2.x: sql-client.sh -f FILE (docs/flink-export.md names the jars).
--
-- Placeholders: the file's ${VAR} references, kept as they are; substitute
-- them before running, e.g. envsubst < FILE > job.sql:
--   ${ES_HOSTS}: sinks[0].hosts (sink es)
--
-- Differences: 1, where Flink will not do what etld does:
--   sinks[0].on_error (sink es, line 32): Flink fails the job on a row the target refuses for good; etld skips it and writes it to out/sensor-stats-rejected.jsonl

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

CREATE TEMPORARY VIEW `per_sensor` AS
SELECT id, COUNT(*) AS readings, MAX(temperature) AS max_temp FROM sensor GROUP BY id;

CREATE TABLE `es` (
  `id` STRING,
  `readings` BIGINT,
  `max_temp` DOUBLE,
  PRIMARY KEY (`id`) NOT ENFORCED
) WITH (
  'connector' = 'elasticsearch-7',
  'hosts' = '${ES_HOSTS}',
  'index' = 'sensor-stats'
);

EXECUTE STATEMENT SET
BEGIN
INSERT INTO `es` SELECT * FROM `per_sensor`;
END;

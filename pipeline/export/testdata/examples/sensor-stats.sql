-- Flink SQL script of the etld pipeline sensor-stats (configs/examples/sensor-stats.yaml), written by etld export flink.
-- Run it with Flink 2.x: sql-client.sh -f FILE (docs/flink-export.md names the jars).

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

CREATE TABLE `console` (
  `id` STRING,
  `readings` BIGINT,
  `max_temp` DOUBLE
) WITH (
  'connector' = 'print'
);

EXECUTE STATEMENT SET
BEGIN
INSERT INTO `console` SELECT * FROM `per_sensor`;
END;

-- Flink SQL script of the etld pipeline sensor-windows (configs/examples/sensor-windows.yaml), written by etld export flink.
-- Run it with Flink 2.x: sql-client.sh -f FILE (docs/flink-export.md names the jars).
--
-- Differences: 3, where Flink will not do what etld does:
--   sinks[0].path (sink out, line 29): Flink's filesystem sink writes a directory out/sensor-windows.csv of part files (part-<uuid>-<n>), committed at checkpoints and at the end of a bounded job, instead of the one file
--   sinks[0].format.header (sink out, line 30): Flink's csv format writes no header line
--   sinks[0].format (sink out, line 30): Flink's csv format writes a timestamp quoted and without a zero fraction ("2019-01-17 09:43:10"); etld writes 2019-01-17 09:43:10.000 (column window_start)

SET 'execution.runtime-mode' = 'streaming';
SET 'table.local-time-zone' = 'UTC';
SET 'execution.checkpointing.interval' = '10 s';
SET 'table.exec.mini-batch.enabled' = 'true';
SET 'table.exec.mini-batch.allow-latency' = '50 ms';
SET 'table.exec.mini-batch.size' = '1024';

CREATE TABLE `sensor` (
  `id` STRING,
  `ts` BIGINT,
  `temperature` DOUBLE,
  `event_time` AS TO_TIMESTAMP_LTZ(ts, 0),
  WATERMARK FOR `event_time` AS event_time - INTERVAL '2' SECOND
) WITH (
  'connector' = 'filesystem',
  'path' = 'configs/examples/data/sensor.csv',
  'format' = 'csv'
);

CREATE TEMPORARY VIEW `per_window` AS
SELECT window_start, window_end, id, COUNT(*) AS readings, AVG(temperature) AS avg_temp FROM TABLE(TUMBLE(TABLE sensor, DESCRIPTOR(event_time), INTERVAL '10' SECOND)) GROUP BY window_start, window_end, id;

CREATE TABLE `out` (
  `window_start` TIMESTAMP(3),
  `window_end` TIMESTAMP(3),
  `id` STRING,
  `readings` BIGINT,
  `avg_temp` DOUBLE
) WITH (
  'connector' = 'filesystem',
  'path' = 'out/sensor-windows.csv',
  'format' = 'csv'
);

EXECUTE STATEMENT SET
BEGIN
INSERT INTO `out` SELECT * FROM `per_window`;
END;

-- Flink SQL script of the etld pipeline kafka-sensor-stats (configs/examples/kafka-sensor-stats.yaml), written by etld export flink.
-- Run it with Flink 2.x: sql-client.sh -f FILE (docs/flink-export.md names the jars).
--
-- Placeholders: the file's ${VAR} references, kept as they are; substitute
-- them before running, e.g. envsubst < FILE > job.sql:
--   ${KAFKA_BROKERS}: sinks[0].brokers (sink stats); sinks[1].brokers (sink stats_changelog)
--
-- Differences: 2, where Flink will not do what etld does:
--   sinks[0].create_topic (sink stats, line 35): Flink does not create topics: create sensor_stats (3 partitions) before the job starts, or let the brokers create it with their defaults (auto.create.topics.enable)
--   sinks[1].create_topic (sink stats_changelog, line 44): Flink does not create topics: create sensor_stats_changelog (1 partitions) before the job starts, or let the brokers create it with their defaults (auto.create.topics.enable)

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

CREATE TABLE `stats` (
  `id` STRING,
  `readings` BIGINT,
  `max_temp` DOUBLE,
  PRIMARY KEY (`id`) NOT ENFORCED
) WITH (
  'connector' = 'upsert-kafka',
  'topic' = 'sensor_stats',
  'properties.bootstrap.servers' = '${KAFKA_BROKERS}',
  'key.format' = 'json',
  'value.format' = 'json',
  'properties.compression.type' = 'lz4'
);

CREATE TABLE `stats_changelog` (
  `id` STRING,
  `readings` BIGINT,
  `max_temp` DOUBLE
) WITH (
  'connector' = 'kafka',
  'topic' = 'sensor_stats_changelog',
  'properties.bootstrap.servers' = '${KAFKA_BROKERS}',
  'key.format' = 'json',
  'key.fields' = 'id',
  'value.format' = 'debezium-json'
);

EXECUTE STATEMENT SET
BEGIN
INSERT INTO `stats` SELECT * FROM `per_sensor`;
INSERT INTO `stats_changelog` SELECT * FROM `per_sensor`;
END;

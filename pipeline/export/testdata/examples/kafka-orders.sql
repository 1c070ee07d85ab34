-- Flink SQL script of the etld pipeline kafka-orders (configs/examples/kafka-orders.yaml), written by etld export flink.
-- Run it with Flink 2.x: sql-client.sh -f FILE (docs/flink-export.md names the jars).
--
-- Placeholders: the file's ${VAR} references, kept as they are; substitute
-- them before running, e.g. envsubst < FILE > job.sql:
--   ${KAFKA_BROKERS}: sources[0].brokers (source orders)
--
-- Differences: 2, where Flink will not do what etld does:
--   sources[0].group_id (source orders, line 16): Flink assigns partitions itself and commits offsets only for monitoring: it joins no consumer group (no static member id, no rebalance), and resumes from its own checkpoints
--   sources[0].on_error (source orders, line 25): etld sets aside a record that does not decode and counts it; Flink's ignore-parse-errors drops it unseen, and json formats keep a record whose field has the wrong type with that field NULL

SET 'execution.runtime-mode' = 'streaming';
SET 'table.local-time-zone' = 'UTC';
SET 'execution.checkpointing.interval' = '10 s';
SET 'table.exec.mini-batch.enabled' = 'true';
SET 'table.exec.mini-batch.allow-latency' = '50 ms';
SET 'table.exec.mini-batch.size' = '1024';

CREATE TABLE `orders` (
  `order_id` BIGINT,
  `customer` STRING,
  `amount` DECIMAL(10, 2),
  `part` INT METADATA FROM 'partition' VIRTUAL,
  `off` BIGINT METADATA FROM 'offset' VIRTUAL
) WITH (
  'connector' = 'kafka',
  'topic' = 'orders',
  'properties.bootstrap.servers' = '${KAFKA_BROKERS}',
  'properties.group.id' = 'etld-orders',
  'scan.startup.mode' = 'group-offsets',
  'properties.auto.offset.reset' = 'earliest',
  'format' = 'json',
  'json.ignore-parse-errors' = 'true'
);

CREATE TEMPORARY VIEW `revenue` AS
SELECT customer, COUNT(*) AS orders, SUM(amount) AS revenue FROM orders GROUP BY customer;

CREATE TABLE `out` (
  `customer` STRING,
  `orders` BIGINT,
  `revenue` DECIMAL(38, 2)
) WITH (
  'connector' = 'print'
);

EXECUTE STATEMENT SET
BEGIN
INSERT INTO `out` SELECT * FROM `revenue`;
END;

-- Flink SQL script of the etld pipeline kafka-orders-produce (configs/examples/kafka-orders-produce.yaml), written by etld export flink.
-- Run it with Flink 2.x: sql-client.sh -f FILE (docs/flink-export.md names the jars).
--
-- Placeholders: the file's ${VAR} references, kept as they are; substitute
-- them before running, e.g. envsubst < FILE > job.sql:
--   ${KAFKA_BROKERS}: sinks[0].brokers (sink topic)
--
-- Differences: 2, where Flink will not do what etld does:
--   sources[0].seed (source gen, line 12): Flink's datagen takes no seed: its random columns get other values than etld's (sequences are the same)
--   sinks[0].create_topic (sink topic, line 35): Flink does not create topics: create orders (3 partitions) before the job starts, or let the brokers create it with their defaults (auto.create.topics.enable)

SET 'execution.runtime-mode' = 'streaming';
SET 'table.local-time-zone' = 'UTC';
SET 'execution.checkpointing.interval' = '10 s';
SET 'table.exec.mini-batch.enabled' = 'true';
SET 'table.exec.mini-batch.allow-latency' = '50 ms';
SET 'table.exec.mini-batch.size' = '1024';

CREATE TABLE `gen` (
  `order_id` BIGINT,
  `customer_no` INT,
  `amount` DECIMAL(10, 2)
) WITH (
  'connector' = 'datagen',
  'rows-per-second' = '2147483647',
  'fields.order_id.kind' = 'sequence',
  'fields.order_id.start' = '1',
  'fields.order_id.end' = '1000',
  'fields.customer_no.kind' = 'random',
  'fields.customer_no.min' = '1',
  'fields.customer_no.max' = '20',
  'fields.amount.kind' = 'random',
  'fields.amount.min' = '1',
  'fields.amount.max' = '500'
);

CREATE TEMPORARY VIEW `orders` AS
SELECT order_id, CONCAT('customer-', CAST(customer_no AS STRING)) AS customer, amount FROM gen;

CREATE TABLE `topic` (
  `order_id` BIGINT,
  `customer` STRING,
  `amount` DECIMAL(10, 2)
) WITH (
  'connector' = 'kafka',
  'topic' = 'orders',
  'properties.bootstrap.servers' = '${KAFKA_BROKERS}',
  'key.format' = 'json',
  'key.fields' = 'order_id',
  'value.format' = 'json'
);

EXECUTE STATEMENT SET
BEGIN
INSERT INTO `topic` SELECT * FROM `orders`;
END;

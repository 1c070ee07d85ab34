-- Flink SQL script of the etld pipeline cdc-canal-products (configs/examples/cdc-canal-products.yaml), written by etld export flink.
-- Run it with Flink 2.x: sql-client.sh -f FILE (docs/flink-export.md names the jars).
--
-- Differences: 1, where Flink will not do what etld does:
--   sources[0].format (source products, line 13): an UPDATE message of several rows: Flink's canal-json looks each column up in the whole "old" array (JsonNode.findValue), so a column that another row of the message changed is NULL in this row's before-image and retracts the wrong row; etld reads each row's own element of "old"

SET 'execution.runtime-mode' = 'streaming';
SET 'table.local-time-zone' = 'UTC';
SET 'execution.checkpointing.interval' = '10 s';
SET 'table.exec.mini-batch.enabled' = 'true';
SET 'table.exec.mini-batch.allow-latency' = '50 ms';
SET 'table.exec.mini-batch.size' = '1024';

CREATE TABLE `products` (
  `id` BIGINT,
  `name` STRING,
  `category` STRING,
  `weight` DECIMAL(10, 2),
  PRIMARY KEY (`id`) NOT ENFORCED
) WITH (
  'connector' = 'filesystem',
  'path' = 'configs/examples/data/products-canal.jsonl',
  'format' = 'canal-json',
  'canal-json.table.include' = 'products'
);

CREATE TEMPORARY VIEW `per_category` AS
SELECT category, COUNT(*) AS products, MAX(weight) AS heaviest FROM products GROUP BY category;

CREATE TABLE `out` (
  `category` STRING,
  `products` BIGINT,
  `heaviest` DECIMAL(10, 2)
) WITH (
  'connector' = 'print'
);

EXECUTE STATEMENT SET
BEGIN
INSERT INTO `out` SELECT * FROM `per_category`;
END;

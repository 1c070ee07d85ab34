-- Flink SQL script of the etld pipeline hello-datagen (configs/examples/hello-datagen.yaml), written by etld export flink.
-- Run it with Flink 2.x: sql-client.sh -f FILE (docs/flink-export.md names the jars).
--
-- Differences: 1, where Flink will not do what etld does:
--   sources[0].seed (source gen, line 10): Flink's datagen takes no seed: its random columns get other values than etld's (sequences are the same)

SET 'execution.runtime-mode' = 'streaming';
SET 'table.local-time-zone' = 'UTC';
SET 'execution.checkpointing.interval' = '10 s';
SET 'table.exec.mini-batch.enabled' = 'true';
SET 'table.exec.mini-batch.allow-latency' = '50 ms';
SET 'table.exec.mini-batch.size' = '1024';

CREATE TABLE `gen` (
  `myCol` INT,
  `myOtherCol` BOOLEAN
) WITH (
  'connector' = 'datagen',
  'number-of-rows' = '3',
  'rows-per-second' = '2147483647',
  'fields.myCol.kind' = 'random',
  'fields.myOtherCol.kind' = 'random'
);

CREATE TABLE `console` (
  `myCol` INT,
  `myOtherCol` BOOLEAN
) WITH (
  'connector' = 'print'
);

EXECUTE STATEMENT SET
BEGIN
INSERT INTO `console` SELECT * FROM `gen`;
END;

-- Flink SQL script of the etld pipeline messages (configs/examples/messages.yaml), written by etld export flink.
-- Run it with Flink 2.x: sql-client.sh -f FILE (docs/flink-export.md names the jars).
--
-- Differences: 1, where Flink will not do what etld does:
--   sources[0].format.header (source messages, line 10): Flink's csv format has no header: it reads the header line as a row, with NULL in each column whose type the name does not parse as; the export sets csv.ignore-parse-errors so that the line does not fail the job (which also makes every other unparsable field NULL instead of failing) and reads the table through a view that drops rows that look like the header (a data row equal to the column names is dropped too)

SET 'execution.runtime-mode' = 'streaming';
SET 'table.local-time-zone' = 'UTC';
SET 'execution.checkpointing.interval' = '10 s';
SET 'table.exec.mini-batch.enabled' = 'true';
SET 'table.exec.mini-batch.allow-latency' = '50 ms';
SET 'table.exec.mini-batch.size' = '1024';

CREATE TABLE `messages_file` (
  `user` BIGINT,
  `seq` INT,
  `text` STRING
) WITH (
  'connector' = 'filesystem',
  'path' = 'configs/examples/data/messages.csv',
  'format' = 'csv',
  'csv.ignore-parse-errors' = 'true'
);

CREATE TEMPORARY VIEW `messages` AS
SELECT * FROM `messages_file` WHERE NOT (`user` IS NULL AND `seq` IS NULL AND COALESCE(LOWER(`text`) = 'text', FALSE));

CREATE TABLE `console` (
  `user` BIGINT,
  `seq` INT,
  `text` STRING
) WITH (
  'connector' = 'print'
);

EXECUTE STATEMENT SET
BEGIN
INSERT INTO `console` SELECT * FROM `messages`;
END;

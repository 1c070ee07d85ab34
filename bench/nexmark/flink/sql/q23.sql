-- Nexmark q23 for Flink 2.3: the nexmark project's ddl_gen.sql, ddl_views.sql and q23.sql
-- (nexmark/nexmark at 6b3646c3baec701f1fa74baf938d235f742e5d3c), made by scripts/nexmark/flink.sh. Changed: ddl_gen.sql's datagen reads ${EVENTS_FILE} (json) with the filesystem connector; A.dateTime quoted.
CREATE TABLE datagen (
    event_type int,
    person ROW<
        id  BIGINT,
        name  VARCHAR,
        emailAddress  VARCHAR,
        creditCard  VARCHAR,
        city  VARCHAR,
        state  VARCHAR,
        `dateTime` TIMESTAMP(3),
        extra  VARCHAR>,
    auction ROW<
        id  BIGINT,
        itemName  VARCHAR,
        description  VARCHAR,
        initialBid  BIGINT,
        reserve  BIGINT,
        `dateTime`  TIMESTAMP(3),
        expires  TIMESTAMP(3),
        seller  BIGINT,
        category  BIGINT,
        extra  VARCHAR>,
    bid ROW<
        auction  BIGINT,
        bidder  BIGINT,
        price  BIGINT,
        channel  VARCHAR,
        url  VARCHAR,
        `dateTime`  TIMESTAMP(3),
        extra  VARCHAR>,
    `dateTime` AS
        CASE
            WHEN event_type = 0 THEN person.`dateTime`
            WHEN event_type = 1 THEN auction.`dateTime`
            ELSE bid.`dateTime`
        END,
    WATERMARK FOR `dateTime` AS `dateTime` - INTERVAL '4' SECOND
) WITH ('connector' = 'filesystem', 'path' = '${EVENTS_FILE}', 'format' = 'json');
CREATE VIEW person AS
SELECT
    person.id,
    person.name,
    person.emailAddress,
    person.creditCard,
    person.city,
    person.state,
    `dateTime`,
    person.extra
FROM datagen WHERE event_type = 0;

CREATE VIEW auction AS
SELECT
    auction.id,
    auction.itemName,
    auction.description,
    auction.initialBid,
    auction.reserve,
    `dateTime`,
    auction.expires,
    auction.seller,
    auction.category,
    auction.extra
FROM datagen WHERE event_type = 1;

CREATE VIEW bid AS
SELECT
    bid.auction,
    bid.bidder,
    bid.price,
    bid.channel,
    bid.url,
    `dateTime`,
    bid.extra
FROM datagen WHERE event_type = 2;
-- -------------------------------------------------------------------------------------------------
-- Query 23: Expand bid with person and auction (Not in original suite)
-- -------------------------------------------------------------------------------------------------
-- Find all bids made by a person who has also listed an item for auction
-- Illustrates a multi-way join.
-- -------------------------------------------------------------------------------------------------

CREATE TABLE nexmark_q23
(
    bidder           BIGINT,
    price            BIGINT,
    channel          VARCHAR,
    url              VARCHAR,
    bid_extra        VARCHAR,

    person_id       BIGINT,
    name             VARCHAR,
    emailAddress     VARCHAR,
    creditCard       VARCHAR,
    city             VARCHAR,
    state            VARCHAR,
    person_extra     VARCHAR,

    itemName         VARCHAR,
    description      VARCHAR,
    initialBid       BIGINT,
    reserve          BIGINT,
    auction_dateTime TIMESTAMP(3),
    expires          TIMESTAMP(3),
    seller           BIGINT,
    category         BIGINT,
    auction_extra    VARCHAR
) WITH (
      'connector' = 'blackhole'
      );

INSERT INTO nexmark_q23
SELECT bidder,
       price,
       channel,
       url,
       B.extra    AS bid_extra,

       P.id       AS person_id,
       name,
       emailAddress,
       creditCard,
       city,
       state,
       P.extra    AS person_extra,
       itemName,

       description,
       initialBid,
       reserve,
       A.`dateTime` AS auction_dateTime,
       expires,
       seller,
       category,
       A.extra    AS auction_extra
FROM bid B
         JOIN
     person P ON P.id = B.bidder
         JOIN
     auction A ON A.seller = B.bidder;



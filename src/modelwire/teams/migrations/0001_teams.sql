-- modelwire teams: virtual keys, teams and the spend record (issue 25).
-- Applied by `modelwire db upgrade` in one transaction, recorded in modelwire_migrations.
-- Keys are stored by their SHA-256 only; the spend record never holds content.

CREATE TABLE modelwire_teams (
    id          text PRIMARY KEY,
    name        text NOT NULL UNIQUE,
    record      jsonb NOT NULL
);

CREATE TABLE modelwire_keys (
    id          text PRIMARY KEY,
    key_hash    text NOT NULL UNIQUE,
    name        text NOT NULL UNIQUE,
    team_id     text,
    record      jsonb NOT NULL
);
CREATE INDEX modelwire_keys_team ON modelwire_keys (team_id);

CREATE TABLE modelwire_spend (
    time                timestamptz NOT NULL,
    request_id          text NOT NULL,
    key_id              text,
    team_id             text,
    model_asked         text NOT NULL,
    model_served        text NOT NULL,
    provider            text NOT NULL,
    input_tokens        integer NOT NULL,
    output_tokens       integer NOT NULL,
    cache_read_tokens   integer NOT NULL,
    cache_write_tokens  integer NOT NULL,
    reasoning_tokens    integer NOT NULL,
    cost_usd            double precision,
    status              integer NOT NULL,
    latency_ms          double precision NOT NULL
);
CREATE INDEX modelwire_spend_by_key ON modelwire_spend (key_id, time);
CREATE INDEX modelwire_spend_by_team ON modelwire_spend (team_id, time);
CREATE INDEX modelwire_spend_by_time ON modelwire_spend (time);

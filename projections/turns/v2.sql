-- turns: what was said, searchable. Built in a schema of its own (proj_turns);
-- v2: the text indexed is the first 50,000 characters. A tsvector holds at most
-- 1 MB, and a turn of 200,000 characters of distinct hyphenated words made one of
-- 1.5 MB: the insert failed, and with it the projection of every later turn.
-- statements are unqualified and run with that schema first on the search_path.
CREATE TABLE turns (
    tenant_id      text        NOT NULL,
    turn_id        text        NOT NULL,
    role           text        NOT NULL,
    text           text        NOT NULL,
    session_key    text,
    project_key    text,
    user_key       text,
    org_key        text,
    subject        text,
    stream_id      text        NOT NULL,
    event_id       text        NOT NULL,
    position       bigint      NOT NULL,
    occurred_at    timestamptz NOT NULL,
    recorded_at    timestamptz NOT NULL,
    tsv            tsvector    GENERATED ALWAYS AS (to_tsvector('english', left(text, 50000))) STORED,
    PRIMARY KEY (tenant_id, turn_id)
);
-- @indexes: built after a bulk load
CREATE INDEX turns_tsv ON turns USING gin (tsv);
CREATE INDEX turns_session ON turns (tenant_id, session_key, occurred_at);
CREATE INDEX turns_subject ON turns (tenant_id, subject);

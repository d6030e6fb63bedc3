"""Conversation memory (issue 23): a long conversation between two people, recorded
with their names as user keys, then asked about by someone who is neither of them
(the conversation's project scope only).

Search puts the evidence first (a speaker named in every turn is no answer, and
cites only the few turns that match), each cited turn with its speaker and time.
The block quotes the turns that answer, with the speaker's name, the day it was
said and what its relative dates meant then; a served block with turns replays,
an as-of block shows only the turns said by then, and erasure takes them out.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import anyio
import pytest
from fastapi.testclient import TestClient

from memledger.api.app import create_app
from memledger.errors import InvalidIdentifier
from memledger.library import MemoryLedger
from memledger.mcp_server import build_server
from memledger.service import erasure
from memledger.service.record import TurnInput
from memledger.service.types import Scopes
from tests.conftest import TestDatabase
from tests.e2e.conftest import scratch
from tests.integration.test_scope_ids import find_anywhere

PROJECT = "conv-lark"
SAID_ON = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
ANSWER = "I went to the grief counselling circle yesterday, and it helped more than I expected."
# Everyday chatter: each turn names the other person, so the entity of each speaker
# is cited by dozens of turns, as in a long conversation.
FILLER = (
    "{other}, how was your weekend?",
    "Haha that sounds fun, {other}!",
    "Thanks {other}, that means a lot to me.",
    "Good morning {other}! Coffee first, then chores.",
    "Oh wow {other}, I love that.",
)


def _conversation() -> list[TurnInput]:
    turns: list[TurnInput] = []
    speakers = ("Rosalind", "Tobias")
    for i in range(60):
        speaker, other = speakers[i % 2], speakers[(i + 1) % 2]
        text = FILLER[i % len(FILLER)].format(other=other)
        turns.append(_turn(f"lark-t{i:03d}", speaker, text, SAID_ON - timedelta(days=61) + timedelta(days=i)))
    turns.append(_turn("lark-answer", "Rosalind", ANSWER, SAID_ON))
    turns.append(_turn("lark-after", "Tobias", "I am proud of you, Rosalind.", SAID_ON + timedelta(minutes=1)))
    return turns


def _turn(turn_id: str, speaker: str, text: str, when: datetime) -> TurnInput:
    scopes = Scopes(session=f"{PROJECT}-{when.date()}", project=PROJECT, user=speaker)
    return TurnInput(role="user", text=text, scopes=scopes, turn_id=turn_id, occurred_at=when)


ASKER = Scopes(project=PROJECT)
QUESTION = "When did Rosalind go to the grief counselling circle?"


@pytest.fixture(scope="module")
def ledger(database: TestDatabase) -> Iterator[MemoryLedger]:
    with scratch(database, "conversation") as opened:
        yield opened


@pytest.fixture(scope="module")
def tenant(ledger: MemoryLedger) -> str:
    tenant = f"conversation-{uuid.uuid4().hex[:8]}"
    ledger.record_turns(tenant, _conversation())
    ledger.process()
    return tenant


def _cited_turns(items: list) -> list[str]:  # type: ignore[type-arg]
    seen: list[str] = []
    for item in items:
        seen += [t for t in item.source_turns if t not in seen]
    return seen


def test_search_puts_the_answering_turn_before_the_speaker_named_in_every_turn(
    ledger: MemoryLedger, tenant: str
) -> None:
    found = ledger.search(tenant, QUESTION, scopes=ASKER, k=100)
    assert _cited_turns(found)[0] == "lark-answer"
    kinds = [item.kind for item in found]
    assert "entity" in kinds, "the speaker's entity is still found"
    assert kinds.index("entity") > kinds.index("turn")
    [speaker] = ledger.search(tenant, QUESTION, scopes=ASKER, kinds=["entity"], k=1)
    assert "named in the request" in speaker.reasons


def test_each_search_result_cites_at_most_three_turns_best_first(ledger: MemoryLedger, tenant: str) -> None:
    found = ledger.search(tenant, "Thanks Rosalind", scopes=ASKER, k=100)
    [speaker] = [item for item in found if item.kind == "entity" and item.text.startswith("Rosalind")]
    whole = ledger.graph(tenant, "Rosalind").entity
    assert whole is not None and len(whole.source_turns) > 3
    turn_order = [item.item_id for item in found if item.kind == "turn"]
    assert set(speaker.source_turns) <= set(whole.source_turns) and len(speaker.source_turns) == 3
    assert list(speaker.source_turns) == sorted(speaker.source_turns, key=turn_order.index), "best matching first"
    assert all(len(item.source_turns) <= 3 for item in found)


def test_search_results_carry_each_cited_turns_speaker_and_time(ledger: MemoryLedger, tenant: str) -> None:
    [turn] = [item for item in ledger.search(tenant, QUESTION, scopes=ASKER) if item.item_id == "lark-answer"]
    [cited] = turn.cited
    assert (cited.turn_id, cited.speaker, cited.said_at) == ("lark-answer", "Rosalind", SAID_ON)
    assert turn.speakers == ("Rosalind",)


def test_provenance_names_the_speaker_of_each_source_turn(ledger: MemoryLedger, tenant: str) -> None:
    [turn] = ledger.provenance(tenant, "lark-answer").turns
    assert (turn.speaker, turn.occurred_at) == ("Rosalind", SAID_ON)


def test_search_by_kind_gives_only_that_kind_and_refuses_an_unknown_one(ledger: MemoryLedger, tenant: str) -> None:
    found = ledger.search(tenant, QUESTION, scopes=ASKER, k=10, kinds=["turn"])
    assert found and {item.kind for item in found} == {"turn"}
    with pytest.raises(InvalidIdentifier, match="kind"):
        ledger.search(tenant, QUESTION, scopes=ASKER, kinds=["memo"])  # type: ignore[list-item]


def test_the_block_quotes_the_answering_turn_with_its_speaker_day_and_dates(ledger: MemoryLedger, tenant: str) -> None:
    block = ledger.context(tenant, QUESTION, scopes=ASKER)
    assert "lark-answer" in block.item_ids
    [line] = [line for line in block.text.splitlines() if "[lark-answer]" in line]
    assert "said by Rosalind" in line and "on 2023-05-08" in line
    assert line.endswith("(yesterday = 2023-05-07)")
    assert "## Conversation memory" in block.text


def test_a_block_with_turns_replays_from_the_ledger(ledger: MemoryLedger, tenant: str) -> None:
    block = ledger.context(tenant, QUESTION, scopes=ASKER)
    replayed = ledger.replay(tenant, block.event_id)
    assert replayed.matches and "lark-answer" in replayed.block.item_ids


def test_an_as_of_block_quotes_only_the_turns_said_by_then(ledger: MemoryLedger, tenant: str) -> None:
    before = ledger.context(tenant, QUESTION, scopes=ASKER, as_of=1)
    assert "lark-answer" not in before.item_ids
    now = datetime.now(UTC)
    assert "lark-answer" in ledger.context(tenant, QUESTION, scopes=ASKER, as_of=now).item_ids


def test_another_conversation_does_not_see_these_turns(ledger: MemoryLedger, tenant: str) -> None:
    elsewhere = ledger.context(tenant, QUESTION, scopes=Scopes(project="another-conversation"))
    assert "lark-answer" not in elsewhere.item_ids
    assert not [i for i in ledger.search(tenant, QUESTION, scopes=Scopes(project="x")) if i.kind == "turn"]


def test_a_user_key_of_another_shape_is_never_stored_as_a_name(ledger: MemoryLedger) -> None:
    tenant = f"conversation-ids-{uuid.uuid4().hex[:8]}"
    account = "acct-9931-rosalind@example.com"
    scopes = Scopes(project=PROJECT, user=account)
    ledger.record_turn(tenant, "user", "I went to the grief counselling circle yesterday.", scopes=scopes)
    ledger.record_turn(tenant, "user", "Pottery on Tuesdays now.", scopes=scopes, speaker="Roz")
    ledger.process()
    assert not find_anywhere(ledger.engine, [account])[account]
    lines = [line for line in ledger.context(tenant, QUESTION, scopes=ASKER).text.splitlines() if "circle" in line]
    assert lines and "said by another user (" in lines[0]
    [pottery] = [i for i in ledger.search(tenant, "pottery", scopes=ASKER) if i.kind == "turn"]
    assert pottery.speakers == ("Roz",)


def test_http_and_mcp_search_filter_by_kind_and_name_the_speaker(ledger: MemoryLedger, tenant: str) -> None:
    _, key = ledger.create_key(tenant, label="conversation")
    with TestClient(create_app(ledger.database), headers={"Authorization": f"Bearer {key}"}) as http:
        answer = http.get("/v1/search", params={"q": QUESTION, "project": PROJECT, "kind": "turn"})
        assert answer.status_code == 200, answer.text
        [first, *_] = answer.json()
        assert first["kind"] == "turn" and first["cited"][0]["speaker"] == "Rosalind"
        bad = http.get("/v1/search", params={"q": QUESTION, "kind": "memo"})
        assert bad.status_code == 422
        turn = {"role": "user", "text": "Kiln firing went great on Thursday.", "turn_id": "lark-http", "speaker": "Roz"}
        recorded = http.post("/v1/turns", json=turn | {"scopes": {"project": PROJECT, "user": "acct-77"}})
        assert recorded.status_code == 202, recorded.text
        ledger.process()
        kiln = http.get("/v1/search", params={"q": "kiln firing", "project": PROJECT, "kind": "turn"}).json()
        assert kiln[0]["item_id"] == "lark-http" and kiln[0]["speakers"] == ["Roz"]
    server = build_server(ledger.database, tenant_id=tenant)
    arguments = {"query": QUESTION, "project": PROJECT, "kinds": ["turn"]}
    result = anyio.run(server.call_tool, "memory_search", arguments)
    assert not result.is_error, result.content
    found = result.structured_content["result"]
    assert {r["kind"] for r in found} == {"turn"} and found[0]["said_by"] == ["Rosalind"]


def test_erasure_takes_the_quoted_turns_out_of_blocks_and_replays(database: TestDatabase) -> None:
    with scratch(database, "conversation-erasure") as opened:
        tenant = f"conversation-erase-{uuid.uuid4().hex[:8]}"
        opened.record_turns(tenant, _conversation())
        opened.process()
        served = opened.context(tenant, QUESTION, scopes=ASKER)
        assert "lark-answer" in served.item_ids
        erasure.erase(opened.engine, tenant, "Rosalind", reason="request 23", actor="dpo")
        assert "lark-answer" not in opened.context(tenant, QUESTION, scopes=ASKER).item_ids
        assert not find_anywhere(opened.engine, ["more than I expected"])["more than i expected"]
        replayed = opened.replay(tenant, served.event_id)
        assert not replayed.matches and replayed.erasures_since == 1
        assert "lark-answer" in replayed.erased_items and "more than I expected" not in replayed.block.text


def test_the_speaker_a_request_names_is_who_said_it_not_a_word_to_match(ledger: MemoryLedger) -> None:
    tenant = f"conversation-named-{uuid.uuid4().hex[:8]}"
    said = [
        _turn("n-1", "Tobias", "We finally picked up a little budgie from the rescue, Rosalind!", SAID_ON),
        _turn("n-2", "Rosalind", "We finally picked up a little budgie from the rescue.", SAID_ON),
        *[_turn(f"n-f{i}", "Tobias", f"Take care, Rosalind! ({i})", SAID_ON) for i in range(8)],
    ]
    ledger.record_turns(tenant, said)
    ledger.process()
    found = ledger.search(tenant, "What bird did Rosalind get from the rescue?", scopes=ASKER, kinds=["turn"], k=5)
    assert [item.item_id for item in found][:2] == ["n-2", "n-1"], "her own words first, then words naming her"
    block = ledger.context(tenant, "Which bird did Rosalind adopt?", scopes=ASKER)
    turns_shown = [item_id for item_id in block.item_ids if item_id.startswith("n-")]
    assert turns_shown[0] == "n-2", "of the turns, hers comes first (an entry for Rosalind may lead)"

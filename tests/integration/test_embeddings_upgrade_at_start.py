"""Start-up (``projections.install_all``, which ``bootstrap.connect`` runs) makes a live v2
copy of the embeddings projection v3 in place: the rows stay, and ``projections status``
does not ask for a rebuild."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlalchemy.engine import Engine

from memledger.projectors import live_version, runner
from memledger.projectors.embeddings.projector import VERSION, EmbeddingsProjector
from memledger.service import projections
from tests.integration.test_embedding_chain_rows import Switchable, tenant, turn
from tests.integration.test_embeddings import Writer, rows
from tests.integration.test_projections_support import fresh_database

if TYPE_CHECKING:
    from tests.conftest import TestDatabase


class V2(EmbeddingsProjector):
    version = 2


def embeddings_state(engine: Engine) -> tuple[int, str]:
    (found,) = [s for s in projections.statuses(engine) if s.name == "embeddings"]
    return found.version, found.state


def test_start_up_upgrades_a_live_v2_embeddings_copy_in_place_and_status_needs_no_rebuild(
    database: TestDatabase,
) -> None:
    with fresh_database(database, "embstart") as engine:
        chain = Switchable()
        runner.install(engine, V2(chain))
        who = tenant()
        Writer(engine, who).append(turn("t1", f"a v2 row ({who})"), turn("t2", f"another v2 row ({who})"))
        runner.catch_up(engine, V2(chain))
        held = rows(engine, who)
        assert len(held) == 2
        assert embeddings_state(engine) == (2, "live (rebuild needed: new version)")

        projections.install_all(engine)
        live_version.forget()

        assert embeddings_state(engine) == (VERSION, "live") == (3, "live")
        assert rows(engine, who) == held, "upgraded where it stands: no row rebuilt or lost"
        projections.install_all(engine)  # a second start leaves a v3 copy as it is
        assert embeddings_state(engine) == (3, "live")

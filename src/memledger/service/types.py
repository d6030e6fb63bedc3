"""Types the surfaces (API, CLI, MCP) pass to and get from the service layer."""

from memledger.events.catalogue import PromotionKind, ScopeKind, Scopes, TenantSettingsChanged
from memledger.selection.types import ITEM_KINDS, ItemKind, SelectedItem, Selection, TurnRef

__all__ = [
    "ITEM_KINDS",
    "ItemKind",
    "PromotionKind",
    "ScopeKind",
    "Scopes",
    "SelectedItem",
    "Selection",
    "TenantSettingsChanged",
    "TurnRef",
]

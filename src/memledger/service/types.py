"""Types the surfaces (API, CLI, MCP) pass to and get from the service layer."""

from memledger.events.catalogue import PromotionKind, ScopeKind, Scopes, TenantSettingsChanged
from memledger.selection.types import SelectedItem, Selection

__all__ = ["PromotionKind", "ScopeKind", "Scopes", "SelectedItem", "Selection", "TenantSettingsChanged"]

"""Types the surfaces (API, CLI, MCP) pass to and get from the service layer."""

from memledger.events.catalogue import Scopes, TenantSettingsChanged
from memledger.selection.types import SelectedItem, Selection

__all__ = ["Scopes", "SelectedItem", "Selection", "TenantSettingsChanged"]

"""Installing a lock: inventory of a prefix (pure), the plan, quarantine + journal, apply,
verify."""

"""Pure resolution: intent + target + knowledge (+ injected metadata ports) -> Lock. No I/O."""

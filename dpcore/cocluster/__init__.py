"""cocluster algorithms of dpcore (import from the submodules)."""

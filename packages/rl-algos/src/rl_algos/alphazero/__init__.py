"""AlphaZero with Gumbel MuZero's search (mctx): self-play on a board game's own rules."""

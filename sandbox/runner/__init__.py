"""Running agents on packs: attempts, batches, agents (reference, cmd, openai, replay)."""

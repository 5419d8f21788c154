"""Views: how layout primitives turn into index expressions instead of memory traffic."""

"""splice verify: prove a native cut equal to the code it replaces, on the CPU (docs/verify.md)."""

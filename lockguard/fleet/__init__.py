"""lockguard fleet: the doctor on every node through an engine, and the merge of per-node reports
into groups and a drift table. Everything here is pure; the engines (ray, slurm, clush, kubectl)
are adapters in lockguard.io.engines."""

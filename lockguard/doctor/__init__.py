"""`lockguard doctor`: probe the machine and a target environment, diagnose known GPU failures."""

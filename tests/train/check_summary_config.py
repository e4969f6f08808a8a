#!/usr/bin/env python3
"""summary.json's "config" against the trace's "gprof" header and GP_TRACE_CONFIG_KEYS.

The trainer writes its run configuration twice (train_output.c: set_prof_config for the trace,
put_config for summary.json). Every key of summary.json's "config" that the list names (by its
GP_CFG_ string) must be in the trace's header with the same value, and every other key must be
one of the summary's own (SUMMARY_ONLY: options the trace header does not carry), so a key
renamed or given another value on one side only fails here.
Usage: check_summary_config.py TRACE_SCHEMA_H SUMMARY_JSON TRACE_JSON_GZ"""
import gzip
import json
import re
import sys


# summary.json's config keys that are no "gprof" key; a new one gets its line here
SUMMARY_ONLY = {"optimizer", "lr", "epochs", "max_steps", "accumulate", "seed", "augment", "data",
                "train_samples", "test_samples"}


def list_keys(schema_h):
    """The key strings of GP_TRACE_CONFIG_KEYS, each with its writer."""
    text = open(schema_h, encoding="utf-8").read()
    names = dict(re.findall(r'#define\s+(GP_CFG_\w+)\s+"([^"]+)"', text))
    rows = re.findall(r'X\((GP_CFG_\w+),\s*\w+,\s*\w+,\s*"(\w+)"', text)
    return {names[m]: writer for m, writer in rows if m in names}


def main():
    schema_h, summary_path, trace_path = sys.argv[1:4]
    keys = list_keys(schema_h)
    if len(keys) < 40:
        print(f"FAIL: read {len(keys)} keys of GP_TRACE_CONFIG_KEYS from {schema_h}")
        return 1
    config = json.load(open(summary_path, encoding="utf-8"))["config"]
    with gzip.open(trace_path, "rt", encoding="utf-8") as f:
        header = json.load(f)["gprof"]
    shared = [k for k in config if k in keys]
    bad = [f"{k}: summary {config[k]!r}, trace {header.get(k, '<absent>')!r}"
           for k in shared if header.get(k) != config[k]]
    bad += [f"{k}: in summary.json's config, but neither a GP_TRACE_CONFIG_KEYS key nor summary-only"
            for k in config if k not in keys and k not in SUMMARY_ONLY]
    if len(shared) < 5:
        bad.append(f"only {len(shared)} summary config keys are list keys: {shared}")
    for line in bad:
        print(f"FAIL: {line}")
    if not bad:
        print(f"ok: {len(shared)} keys agree: {', '.join(shared)}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

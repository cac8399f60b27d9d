# Prints the losses of recast-run's JSON report, exactly.
import json
import sys

report = json.load(sys.stdin)
for loss in report["losses"]:
    print(repr(loss))

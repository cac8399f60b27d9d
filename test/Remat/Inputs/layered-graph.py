"""Prints a layered remat graph of N nodes (argv[1]): each node reads the
one before it, and with probability 1/2 the ones 2 and 5 before it."""
import json
import random
import sys

n = int(sys.argv[1])
random.seed(1)
nodes = [{"id": i, "cost": 1 + i % 3, "bytes": 1000 + 10 * (i % 7)}
         for i in range(n)]
edges = [[i - d, i] for i in range(1, n) for d in (1, 2, 5)
         if i - d >= 0 and (d == 1 or random.random() < 0.5)]
print(json.dumps({"nodes": nodes, "edges": edges}))

"""The zoo's GPT training step in PyTorch eager, timed: the peer of
`recast-run` in scripts/gpu-check (CUDA) and bench/gpu/step-vs-torch (CPU).

  gpt_torch.py [--device cuda|cpu] [--config tiny|gpt2-small]
               [--precision fp32|bf16] [--steps N] [--warmup N]

The model is the one test/Execution/gpt_reference.py describes (pre-LN
decoder, tied embeddings, tanh GELU, causal mask of -1e4, SGD with lr 0.02),
with the configuration's shapes. bf16 runs the forward under
torch.autocast(bfloat16) as mixed-precision training does; the parameters and
the optimizer stay in FP32. Prints the mean step time in milliseconds as
`torch <precision> step_ms <value>`.
"""
import math
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import torch_step  # noqa: E402

# The zoo's configurations (python/recast/zoo.py, test/Execution/gpt_reference.py).
CONFIGS = {
    "tiny": dict(batch=2, seq=32, vocab=128, layers=2, d_model=64, heads=4),
    "gpt2-small": dict(batch=1, seq=1024, vocab=50257, layers=12, d_model=768,
                       heads=12),
}


class GPT(torch.nn.Module):
    def __init__(self, seq, vocab, layers, d_model, heads, **_):
        super().__init__()
        d = d_model
        self.heads = heads
        self.wte = torch.nn.Parameter(torch.randn(vocab, d) * 0.02)
        self.wpe = torch.nn.Parameter(torch.randn(seq, d) * 0.02)
        self.blocks = torch.nn.ModuleList()
        for _ in range(layers):
            block = torch.nn.Module()
            block.ln1 = torch.nn.LayerNorm(d, eps=1e-5)
            block.qkv = torch.nn.Linear(d, 3 * d)
            block.proj = torch.nn.Linear(d, d)
            block.ln2 = torch.nn.LayerNorm(d, eps=1e-5)
            block.fc = torch.nn.Linear(d, 4 * d)
            block.fc_proj = torch.nn.Linear(4 * d, d)
            self.blocks.append(block)
        self.ln_f = torch.nn.LayerNorm(d, eps=1e-5)
        mask = torch.tril(torch.ones(seq, seq, dtype=torch.bool))
        self.register_buffer("mask", mask)

    def forward(self, tokens):
        inputs, labels = tokens[:, :-1], tokens[:, 1:]
        b, t = inputs.shape
        d = self.wte.shape[1]
        h = self.wte[inputs] + self.wpe
        for blk in self.blocks:
            a = blk.ln1(h)
            q, k, v = blk.qkv(a).split(d, dim=-1)
            split = lambda x: x.view(b, t, self.heads, d // self.heads).transpose(1, 2)
            q, k, v = split(q), split(k), split(v)
            s = (q @ k.transpose(-1, -2)) / math.sqrt(d // self.heads)
            s = s.masked_fill(~self.mask, -1e4)
            o = (s.softmax(-1) @ v).transpose(1, 2).reshape(b, t, d)
            h = h + blk.proj(o)
            h = h + blk.fc_proj(F.gelu(blk.fc(blk.ln2(h)), approximate="tanh"))
        logits = self.ln_f(h) @ self.wte.t()
        return F.cross_entropy(logits.float().reshape(b * t, -1),
                               labels.reshape(-1))


def main():
    p = torch_step.arguments(default_device="cuda", default_steps=50)
    p.add_argument("--config", default="tiny")
    args = p.parse_args()
    cfg = CONFIGS[args.config]
    torch.manual_seed(0)
    model = GPT(**cfg).to(args.device)
    tokens = torch.randint(0, cfg["vocab"], (cfg["batch"], cfg["seq"] + 1),
                           device=args.device)
    torch_step.run(args, torch.optim.SGD(model.parameters(), lr=0.02),
                   lambda: model(tokens))


if __name__ == "__main__":
    main()

// The files `strato init` writes: a small, valid, documented project with one load-balanced endpoint and
// two queue-based ones (GPU and CPU). Kept as text here so the bundled CLI needs no template folder.

export function templateFiles(projectName: string): Record<string, string> {
  return {
    'gpu_worker.py': `"""A queue-based endpoint on a GPU worker.

Call it with POST {base_url}/v2/<endpoint_id>/runsync and {"input": {"prompt": "hello"}}, or through
\`strato dev\`: POST http://localhost:8888/gpu_worker/runsync.
"""
from strato import Endpoint, GpuGroup


@Endpoint(name="gpu-hello", gpu=GpuGroup.ADA_24, workers=(0, 3), idle_timeout=60)
async def gpu_hello(prompt: str = "hello", repeat: int = 1) -> dict:
    """Echo a prompt back, as a stand-in for model inference on a GPU."""
    # Third-party packages go here, inside the function: import torch
    import platform

    return {"text": " ".join([prompt] * repeat), "worker": platform.node()}
`,
    'cpu_worker.py': `"""A queue-based endpoint on a CPU-only worker.

Call it with POST {base_url}/v2/<endpoint_id>/runsync and {"input": {"numbers": [1, 2, 3]}}.
"""
from strato import CpuInstanceType, Endpoint


@Endpoint(name="cpu-stats", cpu=CpuInstanceType.CPU3C_1_2, workers=(0, 2))
def cpu_stats(numbers: list[float]) -> dict:
    """Compute simple statistics of a list of numbers."""
    import statistics

    if not numbers:
        return {"error": "numbers must not be empty"}
    return {
        "count": len(numbers),
        "mean": statistics.fmean(numbers),
        "min": min(numbers),
        "max": max(numbers),
    }
`,
    'lb_worker.py': `"""A load-balanced endpoint: HTTP routes served directly, no queue and no "input" wrapper.

POST {lb_url}/process with {"text": "Hello"}; GET {lb_url}/health.
"""
from strato import CpuInstanceType, Endpoint

api = Endpoint(name="lb-api", cpu=CpuInstanceType.CPU3C_1_2, workers=(1, 3))


@api.post("/process")
def process(text: str, uppercase: bool = False) -> dict:
    """Process a piece of text and return it with its length."""
    result = text.upper() if uppercase else text
    return {"text": result, "length": len(result)}


@api.get("/health")
def health() -> dict:
    """Report that the service is up."""
    return {"status": "ok"}
`,
    '.env.example': `# Copy to .env and fill in. .env is never packaged into a build.
# The API key of your Strato platform (the embedded one keeps it in a key file, and strato platform status
# prints that file's path; the CLI on this machine reads it there, so leave this empty for the embedded one).
STRATO_API_KEY=
# Point the CLI at a remote Strato service instead of the embedded platform:
# STRATO_API_URL=https://strato.example.com
`,
    '.gitignore': `.env
.env.local
.strato/
__pycache__/
*.pyc
.venv/
venv/
`,
    'pyproject.toml': `[project]
name = "${projectName.replace(/[^A-Za-z0-9._-]/g, '-').toLowerCase() || 'strato-project'}"
version = "0.1.0"
description = "Serverless endpoints built with Strato"
requires-python = ">=3.10"
# Strato installs requirements.txt and each endpoint's dependencies=[...], not this list.
dependencies = []
`,
    'requirements.txt': `# Packages every endpoint needs, installed at build time and bundled with the artifact.
# Endpoint-specific packages go in @Endpoint(dependencies=[...]).
# torch, torchvision, torchaudio, numpy and triton are already in the base images.
`,
    'README.md': `# ${projectName}

Serverless endpoints built with [Strato](https://github.com/strato).

| file | endpoint | kind |
|---|---|---|
| \`gpu_worker.py\` | \`gpu-hello\` | queue-based, GPU |
| \`cpu_worker.py\` | \`cpu-stats\` | queue-based, CPU |
| \`lb_worker.py\` | \`lb-api\` | load-balanced, routes \`POST /process\`, \`GET /health\` |

## Develop

    strato dev          # http://localhost:8888, API explorer at /docs
    curl -X POST http://localhost:8888/gpu_worker/runsync -H 'Content-Type: application/json' \\
         -d '{"input": {"prompt": "hi"}}'

## Build and deploy

    strato build        # .strato/artifact.tar.gz and .strato/strato_manifest.json
    strato deploy       # to the environment "production"
    strato env get production

Rules: each queue-based function has its own \`name\`; third-party packages are imported inside the
function body and listed in \`dependencies=[...]\` or requirements.txt.
`,
  };
}

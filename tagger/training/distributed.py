"""Multi-process training on PyTorch's own engine: ``torchrun`` + DistributedDataParallel.

``torchrun --nproc_per_node=N -m tagger train ...`` starts N copies of ``tagger train`` with
``RANK``, ``WORLD_SIZE`` and ``LOCAL_RANK`` (and the rendezvous address) in their environment.
Each copy then

* joins the process group (:func:`init`: ``gloo`` on CPU, ``nccl`` on CUDA, one GPU per
  process: ``cuda:LOCAL_RANK``),
* builds the same model (rank 0's vocabularies are broadcast; DDP broadcasts rank 0's weights),
* trains on its shard of every epoch's batches (:func:`shard`, like ``DistributedSampler``:
  the epoch's batch list, a function of (seed, epoch), is padded by wrapping around to a multiple
  of N and dealt out round robin), DDP averaging the gradients, so one update sees
  N × ``batch_size`` sentences: the *total* batch is ``batch_size`` per process × N,
* evaluates the whole dev set itself (every rank gets the same score, so lr halving, patience
  and the best epoch agree without communication),
* and agrees with the others once per batch on whether to stop or checkpoint (:func:`agree`),
  so that every rank leaves the loop at the same batch.

Only rank 0 writes files (model, checkpoints) and prints progress. Without ``WORLD_SIZE`` (or
with 1) nothing here communicates and training is exactly the single-process run.
"""

from __future__ import annotations

import datetime
import itertools
import os
from dataclasses import dataclass
from typing import Any, Sequence, TypeVar

import torch
import torch.distributed as dist

from tagger.errors import TaggerError

T = TypeVar("T")


@dataclass(frozen=True)
class Context:
    """Where this process stands: ``rank`` of ``world`` processes, ``local_rank`` on its machine."""

    rank: int = 0
    world: int = 1
    local_rank: int = 0

    @property
    def is_main(self) -> bool:
        """True for the one process that writes files and prints (rank 0)."""
        return self.rank == 0

    @property
    def distributed(self) -> bool:
        return self.world > 1


def _env_int(name: str, default: int) -> int:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    try:
        return int(value)
    except ValueError:
        raise TaggerError(f"environment variable {name}={value!r} is not an integer") from None


def env_context() -> Context:
    """The context torchrun's environment describes (``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``);
    a single process without them."""
    world = _env_int("WORLD_SIZE", 1)
    rank = _env_int("RANK", 0)
    local_rank = _env_int("LOCAL_RANK", rank)
    if world < 1 or not 0 <= rank < world or local_rank < 0:
        raise TaggerError(f"bad torchrun environment: RANK={rank} WORLD_SIZE={world} LOCAL_RANK={local_rank}")
    return Context(rank, world, local_rank)


def backend_for(device: str) -> str:
    """``nccl`` for CUDA devices, ``gloo`` for the CPU."""
    return "nccl" if str(device).startswith("cuda") else "gloo"


def process_device(context: Context, device: str) -> str:
    """The device of this process: with several processes on CUDA, ``cuda:LOCAL_RANK`` (one GPU
    each, whatever index ``device`` names); otherwise ``device`` itself."""
    if context.distributed and str(device).startswith("cuda"):
        if context.local_rank >= torch.cuda.device_count():
            raise TaggerError(f"process {context.rank} has LOCAL_RANK {context.local_rank} but this machine has "
                              f"{torch.cuda.device_count()} CUDA devices; start at most that many per node")
        torch.cuda.set_device(context.local_rank)
        return f"cuda:{context.local_rank}"
    return device


def init(device: str, timeout_minutes: float = 30.0) -> Context:
    """Join the process group torchrun describes (once; a no-op for a single process)."""
    context = env_context()
    if context.distributed and not dist.is_initialized():
        if not dist.is_available():
            raise TaggerError("this PyTorch build has no torch.distributed; run without torchrun")
        backend = backend_for(device)
        if backend == "nccl":
            process_device(context, device)
        dist.init_process_group(backend, rank=context.rank, world_size=context.world,
                                timeout=datetime.timedelta(minutes=timeout_minutes))
    return context


def active() -> bool:
    """True inside a process group of more than one process."""
    return dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1


def shutdown() -> None:
    if dist.is_available() and dist.is_initialized():
        dist.destroy_process_group()


def wrap(model: torch.nn.Module, context: Context) -> torch.nn.Module:
    """``model`` in DistributedDataParallel (what the forward pass goes through), or the model
    itself for a single process. Parameters stay those of ``model``: optimise and save that."""
    if not context.distributed:
        return model
    from torch.nn.parallel import DistributedDataParallel

    device = next(model.parameters()).device
    ids = [device.index if device.index is not None else torch.cuda.current_device()] if device.type == "cuda" else None
    return DistributedDataParallel(model, device_ids=ids, output_device=ids[0] if ids else None)


def shard(batches: Sequence[T], rank: int, world: int) -> list[T]:
    """Process ``rank``'s share of an epoch's ``batches``: padded by wrapping around to a multiple
    of ``world`` (every process takes the same number of steps), then every ``world``-th batch
    from ``rank`` on. ``world == 1`` returns the batches unchanged."""
    batches = list(batches)
    if world <= 1 or not batches:
        return batches
    padded = list(itertools.islice(itertools.cycle(batches), -(-len(batches) // world) * world))
    return padded[rank::world]


def _flag_device() -> torch.device:
    if dist.get_backend() == "nccl":
        return torch.device("cuda", torch.cuda.current_device())
    return torch.device("cpu")


def agree(*flags: bool) -> tuple[bool, ...]:
    """Each flag true on any process, for every process (one all-reduce; none when single)."""
    if not active():
        return tuple(bool(f) for f in flags)
    tensor = torch.tensor([int(bool(f)) for f in flags], dtype=torch.int32, device=_flag_device())
    dist.all_reduce(tensor, op=dist.ReduceOp.MAX)
    return tuple(bool(v) for v in tensor.tolist())


def total(value: float) -> float:
    """``value`` summed over the processes (itself when single)."""
    if not active():
        return value
    tensor = torch.tensor([float(value)], dtype=torch.float64, device=_flag_device())
    dist.all_reduce(tensor)
    return tensor.item()


def gather(obj: Any) -> list[Any]:
    """Every process's ``obj`` (picklable), in rank order, on every process; ``[obj]`` when single."""
    if not active():
        return [obj]
    out: list[Any] = [None] * dist.get_world_size()
    dist.all_gather_object(out, obj)
    return out


def broadcast(obj: Any) -> Any:
    """Rank 0's ``obj`` on every process (``obj`` itself when single)."""
    if not active():
        return obj
    box = [obj]
    dist.broadcast_object_list(box, src=0)
    return box[0]

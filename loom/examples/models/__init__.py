"""Reference models in plain ``torch.nn`` with seeded random weights (no downloads, no torchvision).

``resnet18(seed)`` and ``tiny_bert_encoder(seed, ...)`` (4 layers, hidden 312, 12 heads, FFN 1200: the
AXI4MLIR evaluation's TinyBERT shape). Importing this package needs torch (``pip install loom[models]``).
"""

from loom.examples.models.resnet import ResNet18, resnet18
from loom.examples.models.tiny_bert import TinyBertEncoder, tiny_bert_encoder

__all__ = ["ResNet18", "resnet18", "TinyBertEncoder", "tiny_bert_encoder"]

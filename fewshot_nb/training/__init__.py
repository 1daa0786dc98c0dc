"""Backbones, the trainer and its training methods (supervised, ProtoNet, MatchingNet, MAML, Versa, SimCLR, siamese), pre-trained features."""
# Written by hand: nbdev-export leaves an existing __init__.py alone. This is the subpackage's face: the names a user
# starts from (the README, the index and the experiments use them), at most about two dozen; everything else stays
# importable from its module (`from fewshot_nb.training.<module> import ...`). Every module is imported, so that importing
# any part of the package registers all of its components (tests/test_api.py checks the face and its `__all__`).
from . import backbones, trainer, maml, versa, simclr, pretrain, siamese, regimes
from .backbones import BACKBONES, make_backbone, list_backbones, Conv4, ResNet12, load_released_checkpoint
from .trainer import Trainer, Method, Supervised, ProtoNetTraining, MatchingNet
from .trainer import Optimizer, Validate, Evaluate, LRSchedule, Checkpoint, Callback, EarlyStopping, ChannelsLast
from .regimes import REGIMES, train_regime
from .maml import MAML
from .simclr import SimCLR
from .pretrain import Pretrained, pretrained_features

__all__ = ['BACKBONES', 'make_backbone', 'list_backbones', 'Conv4', 'ResNet12',
           'load_released_checkpoint', 'Trainer', 'Method', 'Supervised', 'ProtoNetTraining', 'MatchingNet',
           'Optimizer', 'Validate', 'Evaluate', 'LRSchedule', 'Checkpoint', 'Callback', 'EarlyStopping', 'ChannelsLast', 'REGIMES', 'train_regime', 'MAML', 'SimCLR', 'Pretrained', 'pretrained_features']

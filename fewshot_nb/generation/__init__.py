"""One-shot generative models (VAE-NS, VAE-STN, DA-GAN), the critics of Boutin et al. (2022) and the diversity and recognizability metrics."""
# Written by hand: nbdev-export leaves an existing __init__.py alone. This is the subpackage's face: the names a user
# starts from (the README, the index and the experiments use them), at most about two dozen; everything else stays
# importable from its module (`from fewshot_nb.generation.<module> import ...`). Every module is imported, so that importing
# any part of the package registers all of its components (tests/test_api.py checks the face and its `__all__`).
from . import critics, metrics, base, vae_ns, vae_stn, dagan
from .critics import Critic, load_critic, make_critic, list_critics, save_critic, critic_from_file, train_critic, train_critics
from .metrics import diversity, recognizability, human_point, distance_to_humans, fit_sweep
from .base import GenerativeModel, check_generative_model, generate_samples, load_generator, show_samples
from .base import GENERATORS, make_generator, list_generators
from .vae_ns import VAENS
from .vae_stn import VAESTN
from .dagan import DAGAN

__all__ = ['Critic', 'load_critic', 'make_critic', 'list_critics', 'save_critic', 'critic_from_file', 'train_critic',
           'train_critics', 'diversity', 'recognizability', 'human_point', 'distance_to_humans', 'fit_sweep',
           'GenerativeModel', 'check_generative_model', 'generate_samples', 'load_generator', 'show_samples', 'GENERATORS',
           'make_generator', 'list_generators', 'VAENS', 'VAESTN', 'DAGAN']

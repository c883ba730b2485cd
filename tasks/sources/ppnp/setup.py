from setuptools import setup

setup(name='ppnp',
      version='0.1',
      description='Predict then Propagate: Graph Neural Networks meet Personalized PageRank',
      author='Johannes Klicpera, Aleksandar Bojchevski, Stephan Günnemann',
      author_email='klicpera@in.tum.de',
      packages=['ppnp'],
      zip_safe=False)

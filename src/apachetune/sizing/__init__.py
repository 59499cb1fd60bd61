"""Sizing: measured facts (facts.py, the only psutil user), pure formulas (model.py),
workload profiles (profiles.py) and the recommended MPM section (recommend.py)."""

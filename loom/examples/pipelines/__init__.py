"""Image-pipeline apps (one module each: the algorithm, its schedules, input shapes)."""

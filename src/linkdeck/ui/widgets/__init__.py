"""The dashboard's widgets and how they draw."""

"""What the dashboard knows and how it shows it, apart from drawing."""

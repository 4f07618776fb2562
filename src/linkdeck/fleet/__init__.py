"""One loop per watched host, and the fleet of them."""

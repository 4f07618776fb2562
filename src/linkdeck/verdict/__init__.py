"""What a clean path carries and the verdict of a test."""

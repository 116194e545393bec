"""Where evaluations keep their files (run folders); the database models come later."""

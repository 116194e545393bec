#!/bin/sh
# The trivial entry: every record is normal sinus rhythm (the floor of the leaderboard).
echo "$1,N" >> answers.txt

"""Claim modules of the verification report; each public module defines ``@claim`` functions.

A module may set ``ORDER`` (int) to place its rows in the report (paper order); default 100.
"""

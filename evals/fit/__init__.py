"""Fits of the models PCM ships: the surprise router (`calibration`, `python -m evals calibrate`) and
the pair relation model (`relation_fit`, `python -m evals fit-relation`), with their training data
(`relation_pairs`: the labelled pairs; `router_pairs`: router examples built from them and from a chat)."""
